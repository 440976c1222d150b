package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
)

// jsonPosRE matches the position plan.ParseProfile gives a JSON syntax error.
var jsonPosRE = regexp.MustCompile(`^line (\d+), column (\d+): `)

func init() { register(newPlanCmd) }

type planFlags struct {
	algo    string
	asJSON  bool
	gantt   string
	eval    string
	fit     string
	variant int
	window  int
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan PROFILES.json|-",
		Short: "Plan phases and SM allocations for a set of profiled kernels",
		Long: `plan reads a kernel profile file (format slatec-profile/1, see plan/FORMAT.md)
and prints a schedule: phases run one after another, each with its kernels and
their SM allocations (stm, optimal, slate) or launch order (li, cumas), the
predicted latency per phase, in total, and the gain over running the kernels
one after another on the whole GPU. "-" reads the profiles from standard
input. Phases are numbered from 1, in the text and in the JSON ("phase").

Algorithms:
  stm      Liang et al.'s spatial-temporal multitasking heuristic (Algorithm 1)
  optimal  exhaustive search over phases and SM allocations (small sets only)
  slate    Slate's L/M/H class table and queue-based pair selection
  li       Li et al.'s bin packing by R_task and copy-overlap ordering
  cumas    CuMAS transfer-aware ordering in re-ordering windows`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.algo, "algo", "stm", "planner: stm, optimal, slate, li or cumas")
	fl.BoolVar(&f.asJSON, "json", false, "print the plan as JSON (format slatec-plan/1)")
	fl.StringVar(&f.gantt, "gantt", "", "also write a Gantt chart of the plan as SVG to this file")
	fl.StringVar(&f.eval, "eval", "fluid", "stm/optimal search evaluation: fluid (fast Graham bound) or exact (DRR simulation)")
	fl.StringVar(&f.fit, "fit", "ff", "li grouping: ff (First-Fit decreasing) or bf (Best-Fit decreasing)")
	fl.IntVar(&f.variant, "variant", 3, "li ordering: 2 (T_comp prioritised) or 3 (T_in prioritised)")
	fl.IntVar(&f.window, "window", 8, fmt.Sprintf("cumas re-ordering window (1..%d)", plan.MaxWindow))
	return cmd
}

func runPlan(cmd *cobra.Command, path string, f planFlags) error {
	eval, err := plan.ParseEval(f.eval)
	if err != nil {
		return usagef("--eval: %v", err)
	}
	var fit plan.Fit
	switch f.fit {
	case "ff":
		fit = plan.FirstFit
	case "bf":
		fit = plan.BestFit
	default:
		return usagef("--fit must be ff or bf, got %q", f.fit)
	}
	if f.variant != 2 && f.variant != 3 {
		return usagef("--variant must be 2 or 3, got %d", f.variant)
	}
	if f.window < 1 || f.window > plan.MaxWindow {
		return usagef("--window must be between 1 and %d, got %d", plan.MaxWindow, f.window)
	}
	if f.gantt == "-" {
		return usagef("--gantt - would mix the chart with the plan on stdout: name a file")
	}
	var planner func(*plan.ProfileSet) (*plan.Plan, error)
	switch f.algo {
	case "stm":
		planner = func(ps *plan.ProfileSet) (*plan.Plan, error) { return plan.PlanSTM(ps, plan.STMOptions{Eval: eval}) }
	case "optimal":
		planner = func(ps *plan.ProfileSet) (*plan.Plan, error) {
			return plan.PlanOptimal(ps, plan.OptimalOptions{Eval: eval})
		}
	case "slate":
		planner = func(ps *plan.ProfileSet) (*plan.Plan, error) {
			p, err := plan.PlanSlate(ps)
			if err != nil {
				return nil, err
			}
			notes, err := plan.BesideNotes(ps)
			p.Notes = append(p.Notes, notes...)
			return p, err
		}
	case "li":
		planner = func(ps *plan.ProfileSet) (*plan.Plan, error) {
			return plan.PlanLi(ps, plan.LiOptions{Fit: fit, Variant: f.variant})
		}
	case "cumas":
		planner = func(ps *plan.ProfileSet) (*plan.Plan, error) {
			return plan.PlanCuMAS(ps, plan.CuMASOptions{Window: f.window})
		}
	default:
		return usagef("--algo must be one of stm, optimal, slate, li, cumas; got %q", f.algo)
	}

	stderr := cmd.ErrOrStderr()
	name := path
	if path == "-" {
		name = stdinName
	}
	// Problems in the profile are reported against the file, positioned
	// where JSON syntax gives a line and column (file:line:col: error: ...).
	fail := func(err error) error {
		var ve *plan.ValidationError
		var fe plan.FieldError
		switch {
		case errors.As(err, &ve):
			for _, p := range ve.Problems {
				fmt.Fprintf(stderr, "%s: error: %s\n", name, p.Error())
			}
		case errors.As(err, &fe):
			fmt.Fprintf(stderr, "%s: error: %s\n", name, fe.Error())
		default:
			msg := err.Error()
			if m := jsonPosRE.FindStringSubmatch(msg); m != nil {
				fmt.Fprintf(stderr, "%s:%s:%s: error: %s\n", name, m[1], m[2], msg[len(m[0]):])
			} else {
				fmt.Fprintf(stderr, "%s: error: %s\n", name, msg)
			}
		}
		return silentError{exitInput}
	}
	var data []byte
	if path == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return fmt.Errorf("reading standard input: %v", err)
		}
	} else if data, err = os.ReadFile(path); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	ps, err := plan.ParseProfile(data)
	if err != nil {
		return fail(err)
	}
	p, err := planner(ps)
	if err != nil {
		return fail(err)
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		if _, err := out.Write(append(b, '\n')); err != nil {
			return err
		}
	} else if err := writePlanText(out, p); err != nil {
		return err
	}
	if f.gantt != "" {
		if err := writeGantt(f.gantt, p, cmd.OutOrStdout()); err != nil {
			return err
		}
	}
	return nil
}

// writePlanText prints the plan as a table: one block per phase, one line
// per kernel.
func writePlanText(w io.Writer, p *plan.Plan) error {
	fmt.Fprintf(w, "plan: %s on %s (%d SMs)\n\n", p.Algorithm, p.Device, p.SMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTART ms\tLATENCY ms\tKERNEL\tSMs\tEND ms\tNOTE")
	var buckets []string
	for _, ph := range p.Phases {
		for j, k := range ph.Kernels {
			phase, start, lat, note := "", "", "", ""
			if j == 0 {
				phase = fmt.Sprint(ph.Index + 1)
				start = fmt.Sprintf("%.4f", ph.StartMs)
				lat = fmt.Sprintf("%.4f", ph.LatencyMs)
				note = ph.Note
			}
			sms := "-"
			switch {
			case ph.Overlap:
				sms = "all" // as written, sharing every SM
			case k.SMs > 0:
				sms = fmt.Sprint(k.SMs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\t%s\n", phase, start, lat, k.Name, sms, k.EndMs, note)
		}
		if ph.Bucket != nil {
			buckets = append(buckets, fmt.Sprintf("  phase %d: %d blocks, period %d, hash %s\n    mapKernel starts %s",
				ph.Index+1, ph.Bucket.Blocks, ph.Bucket.Period, ph.Bucket.Hash, headString(ph.Bucket.Head)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(buckets) > 0 {
		fmt.Fprintln(w, "\nleaky-bucket interleaving of merged phases (A = first kernel listed):")
		for _, b := range buckets {
			fmt.Fprintln(w, b)
		}
	}
	// The workload's predicted makespan beside the sequential one (every
	// kernel alone on all SMs, one after another; li and cumas with the
	// copies) from the same profiles.
	fmt.Fprintf(w, "\npredicted makespan %.4f ms, sequential %.4f ms (same profiles), gain %.1f%%\n", p.PredictedMs, p.SequentialMs, 100*p.Gain)
	fmt.Fprintf(w, "ANTT %.3f (sequential %.3f), STP %.3f (sequential %.3f) of %d kernels\n", p.Metrics.ANTT, p.Sequential.ANTT, p.Metrics.STP, p.Sequential.STP, len(p.Kernels))
	if p.Fallback {
		fmt.Fprintln(w, "fallback: the planner's plan was predicted slower than sequential; this is the sequential plan")
	}
	if len(p.Kernels) > 0 {
		solo := "the smallest R[m] over all m"
		if p.Algorithm == "li" || p.Algorithm == "cumas" {
			solo += ", plus its copies"
		}
		fmt.Fprintf(w, "\nper kernel (NTT = end / best solo time, %s):\n", solo)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KERNEL\tEND ms\tBEST SOLO ms\tON SMs\tNTT")
		for _, k := range p.Kernels {
			fmt.Fprintf(tw, "  %s\t%.4f\t%.4f\t%d\t%.3f\n", k.Name, k.EndMs, k.SoloMs, k.BestSMs, k.NTT)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(p.Classes) > 0 {
		fmt.Fprintln(w, "\nclasses:")
		for _, c := range p.Classes {
			fmt.Fprintf(w, "  %s: %s (%s)\n", c.Name, c.Class, c.Reason)
		}
	}
	if len(p.Notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// headString renders the first dispatches of a merged phase as letters
// (A = the phase's first kernel), the way Liang et al. draw mapKernel.
func headString(head []int32) string {
	var sb strings.Builder
	for _, k := range head {
		if k < 26 {
			sb.WriteByte(byte('A' + k))
		} else {
			fmt.Fprintf(&sb, "[%d]", k)
		}
	}
	return sb.String()
}

// ganttBars is a plot.Plotter drawing one horizontal bar per kernel from
// its start to its end, coloured by phase.
type ganttBars struct {
	rows  []ganttRow
	width vg.Length
}

type ganttRow struct {
	y          float64
	start, end float64
	phase      int
}

var ganttColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff},
}

func (g *ganttBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range g.rows {
		x0, x1 := trX(r.start), trX(r.end)
		y := trY(r.y)
		x1 = max(x1, x0+vg.Points(0.5))
		y0, y1 := y-g.width/2, y+g.width/2
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(ganttColors[r.phase%len(ganttColors)], c.ClipPolygonXY(pts))
	}
}

func (g *ganttBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = 0, -0.5
	for _, r := range g.rows {
		xmax = max(xmax, r.end)
		ymax = max(ymax, r.y+0.5)
	}
	return
}

// writeGantt draws the plan as a Gantt chart (kernels on the y axis, time
// on the x axis, one colour per phase) and writes the SVG the way -o writes
// (emit.WriteFileAtomic: never half a chart; "-" is stdout).
func writeGantt(path string, p *plan.Plan, stdout io.Writer) error {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("slatec plan: %s on %s — %.3f ms (gain %.1f%%)", p.Algorithm, p.Device, p.PredictedMs, 100*p.Gain)
	pl.X.Label.Text = "time (ms)"
	var names []string
	g := &ganttBars{width: vg.Points(10)}
	for _, ph := range p.Phases {
		for _, k := range ph.Kernels {
			g.rows = append(g.rows, ganttRow{y: float64(len(names)), start: k.StartMs, end: k.EndMs, phase: ph.Index})
			label := k.Name
			if k.SMs > 0 {
				label = fmt.Sprintf("%s (%d SMs)", k.Name, k.SMs)
			}
			names = append(names, label)
		}
	}
	// Top to bottom in plan order.
	for i := range g.rows {
		g.rows[i].y = float64(len(names) - 1 - i)
	}
	ticks := make([]string, len(names))
	for i, n := range names {
		ticks[len(names)-1-i] = n
	}
	pl.Add(g)
	pl.NominalY(ticks...)
	pl.Y.Min, pl.Y.Max = -0.5, float64(len(names))-0.5
	pl.X.Min = 0
	pl.Add(plotter.NewGrid())
	height := vg.Points(float64(80 + 18*len(names)))
	wt, err := pl.WriterTo(8*vg.Inch, height, "svg")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return emit.WriteFileAtomic(path, b.Bytes(), stdout)
}
