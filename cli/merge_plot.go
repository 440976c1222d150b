package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
)

// mergeRow is one row of bench/results/merge.json (its schema:
// bench/results/merge.schema.json).
type mergeRow struct {
	Case          string  `json:"case"`
	Complementary bool    `json:"complementary"`
	Mode          string  `json:"mode"`
	Split         string  `json:"split"`
	Ms            float64 `json:"ms"`
	Planned       bool    `json:"planned"`
	Kernel        string  `json:"kernel,omitempty"`
	Variant       string  `json:"variant,omitempty"`
}

type mergeResults struct {
	Device string     `json:"device"`
	Commit string     `json:"commit"`
	Date   string     `json:"date"`
	Rows   []mergeRow `json:"rows"`
}

var sweepColors = map[string]color.RGBA{
	"interleaved": {0x1f, 0x77, 0xb4, 0xff},
	"persistent":  {0xff, 0x7f, 0x0e, 0xff},
	"smrange":     {0x2c, 0xa0, 0x2c, 0xff},
	"split":       {0xd6, 0x27, 0x28, 0xff},
}

// runMergePlot draws Liang et al.'s Fig. 2 for one case of a merge.json:
// the speedup over sequential execution against the first kernel's SMs,
// one curve per merge mode, with the concurrent-streams speedup and 1 (the
// sequential run) as references. With --plot-profile, the planner's
// predicted curve beside it: Liang's con_lat (DRR × bandwidth penalty,
// plan.Model) for each split, over seq_lat on all SMs, the kernels taken
// from the case's solo rows, in order.
func runMergePlot(cmd *cobra.Command, fl mergeFlags) error {
	data, err := os.ReadFile(fl.plotSweep)
	if err != nil {
		return usagef("--plot-sweep: %v", err)
	}
	var res mergeResults
	if err := json.Unmarshal(data, &res); err != nil {
		return usagef("--plot-sweep: %s is not merge results (bench/results/merge.schema.json): %v", fl.plotSweep, err)
	}
	var cases []string
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if !seen[r.Case] {
			seen[r.Case] = true
			cases = append(cases, r.Case)
		}
	}
	name := fl.plotCase
	if name == "" && len(cases) == 1 {
		name = cases[0]
	}
	if !seen[name] {
		return usagef("--case: give one of %s", strings.Join(cases, ", "))
	}
	var ps *plan.ProfileSet
	if fl.plotProfile != "" {
		if ps, err = plan.ReadProfileFile(fl.plotProfile); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: error: %v\n", fl.plotProfile, err)
			return silentError{exitInput}
		}
	}
	svg, err := sweepSVG(res, name, ps)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "slatec: error: %v\n", err)
		return silentError{exitInput}
	}
	return emit.WriteFileAtomic(fl.out, svg, cmd.OutOrStdout())
}

func parseSplit(s string) ([]int, bool) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return nil, false
	}
	var out []int
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// sweepSVG draws the sweep of one case.
func sweepSVG(res mergeResults, name string, ps *plan.ProfileSet) ([]byte, error) {
	var seq, streams float64
	var kernels []string
	curves := map[string]plotter.XYs{}
	sms := 0
	for _, r := range res.Rows {
		if r.Case != name {
			continue
		}
		switch r.Mode {
		case "sequential":
			seq = r.Ms
		case "streams":
			streams = r.Ms
		case "solo":
			kernels = append(kernels, r.Kernel)
		}
	}
	if seq <= 0 {
		return nil, fmt.Errorf("case %s has no sequential row: the speedup needs it", name)
	}
	for _, r := range res.Rows {
		if r.Case != name {
			continue
		}
		a, ok := parseSplit(r.Split)
		if !ok || r.Ms <= 0 {
			continue
		}
		total := 0
		for _, x := range a {
			total += x
		}
		sms = max(sms, total)
		curves[r.Mode] = append(curves[r.Mode], plotter.XY{X: float64(a[0]), Y: seq / r.Ms})
	}
	if len(curves) == 0 {
		return nil, fmt.Errorf("case %s has no sweep rows (split A:B[:C])", name)
	}
	p := plot.New()
	legendLines := 0
	// Two lines: one would run past the frame with a long device name.
	title := fmt.Sprintf("%s: speedup over sequential (%.4g ms)\n%s", name, seq, res.Device)
	if res.Commit != "" {
		title += ", commit " + res.Commit
	}
	p.Title.Text = title
	p.X.Label.Text = "SMs of the first kernel (the rest shared by the others)"
	p.Y.Label.Text = "speedup"
	p.Add(plotter.NewGrid())
	xMax := float64(max(sms, 1))
	ref := func(y float64, label string, dashes []vg.Length) error {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: xMax, Y: y}})
		if err != nil {
			return err
		}
		l.Color = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}
		l.Dashes = dashes
		p.Add(l)
		p.Legend.Add(label, l)
		legendLines++
		return nil
	}
	if err := ref(1, "sequential", nil); err != nil {
		return nil, err
	}
	if streams > 0 {
		if err := ref(seq/streams, fmt.Sprintf("streams (%.3fx)", seq/streams), []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
			return nil, err
		}
	}
	yMax := 1.0
	if streams > 0 {
		yMax = max(yMax, seq/streams)
	}
	var modes []string
	for m := range curves {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, m := range modes {
		xys := curves[m]
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		best := 0.0
		for _, xy := range xys {
			yMax = max(yMax, xy.Y)
			best = max(best, xy.Y)
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		c, ok := sweepColors[m]
		if !ok {
			c = color.RGBA{0x94, 0x67, 0xbd, 0xff}
		}
		l.Color, s.Color = c, c
		l.Width = vg.Points(1.5)
		s.Shape = draw.CircleGlyph{}
		s.Radius = vg.Points(2)
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("%s (best %.3fx)", m, best), l, s)
		legendLines++
	}
	if ps != nil {
		pred, err := predictedSweep(ps, kernels, sms)
		if err != nil {
			return nil, err
		}
		for _, xy := range pred {
			yMax = max(yMax, xy.Y)
		}
		l, err := plotter.NewLine(pred)
		if err != nil {
			return nil, err
		}
		l.Color = color.RGBA{0, 0, 0, 0xff}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		p.Legend.Add("predicted (plan: con_lat / seq_lat)", l)
		legendLines++
	}
	p.X.Min, p.X.Max = 0, xMax
	// Headroom for the legend (top left) above the curves.
	top := yMax * (1.2 + 0.07*float64(legendLines))
	step := speedupStep(top)
	p.Y.Min, p.Y.Max = 0, math.Ceil(top/step)*step
	p.Y.Tick.Marker = roundTicks{step}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	const w, h = 7 * vg.Inch, 4.5 * vg.Inch
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// speedupStep is a round tick step for a speedup axis up to hi: at most
// eight labelled ticks.
func speedupStep(hi float64) float64 {
	for _, st := range []float64{0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10} {
		if hi/st <= 8 {
			return st
		}
	}
	return math.Ceil(hi / 8)
}

// roundTicks labels every multiple of step, with an unlabelled tick
// halfway between.
type roundTicks struct{ step float64 }

func (r roundTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	half := r.step / 2
	for i := math.Ceil(lo / half); i*half <= hi+1e-9; i++ {
		v := i * half
		t := plot.Tick{Value: v}
		if int64(i)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'g', 6, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// predictedSweep is Liang's model over the sweep: for each a, the first
// kernel on a SMs and the others sharing the rest equally (as
// bench/merge/common.h sweeps), seq_lat(all SMs) / con_lat.
func predictedSweep(ps *plan.ProfileSet, kernels []string, sms int) (plotter.XYs, error) {
	if len(kernels) < 2 {
		return nil, fmt.Errorf("the predicted curve needs the case's solo rows (the kernels, in order)")
	}
	mdl, err := plan.NewModel(ps)
	if err != nil {
		return nil, err
	}
	if sms > mdl.M || sms == 0 {
		sms = mdl.M
	}
	var idx []int
	for _, k := range kernels {
		i := ps.KernelIndex(k)
		if i < 0 {
			return nil, fmt.Errorf("the profile has no kernel %s", k)
		}
		idx = append(idx, i)
	}
	n := len(idx)
	var out plotter.XYs
	for a := 1; a <= sms-(n-1); a++ {
		c := []plan.Alloc{{Kernel: idx[0], SMs: a}}
		rest := sms - a
		for k := 1; k < n; k++ {
			s := rest / (n - 1)
			if k-1 < rest%(n-1) {
				s++
			}
			c = append(c, plan.Alloc{Kernel: idx[k], SMs: s})
		}
		con := mdl.ConLat(c)
		if con <= 0 {
			continue
		}
		out = append(out, plotter.XY{X: float64(a), Y: mdl.SeqLat(c) / con})
	}
	return out, nil
}
