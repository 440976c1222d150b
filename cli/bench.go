package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/slatec/slatec/corun"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

func init() {
	register(newBenchCmd)
	modes := []string{"all"}
	for _, m := range corun.AllModes {
		modes = append(modes, string(m))
	}
	enumFlags["bench"] = map[string][]string{"modes": modes, "workloads": {"all", "complementary", "pairs", "triples"}}
}

type benchFlags struct {
	quick           bool
	workloads       []string
	modes           []string
	out             string
	json, plot      bool
	profiles        string
	reps, device    int
	peakBW          float64
	timeout         time.Duration
	profileCommands bool
	list            bool
	fake            int
	mpsChild        string
	combine         []string
	probes          []string
	probeAt         time.Duration
	trace           string
	noDeferredGrow  bool
	noSoloTail      bool
	partners        bool
}

// openBenchDevice opens the GPU the bench runs on (a variable so that tests
// can see the no-GPU path with a GPU present).
var openBenchDevice = func(ordinal int, peakBW float64) (corun.Device, error) {
	return corun.OpenCUDA(ordinal, &runtime.Compiler{IncludeDirs: runtime.DefaultIncludeDirs()}, peakBW)
}

// benchNow is the clock of the results' date.
var benchNow = time.Now

func newBenchCmd() *cobra.Command {
	var fl benchFlags
	cmd := &cobra.Command{
		Use:   "bench [flags]",
		Short: "Co-running benchmark: workloads of 2-3 kernels in every sharing mode (issue 11)",
		Long: `bench runs workloads of two or three kernels with fixed work (the kernels of
corun/kernels/corun.cu, two per class: memory-bound, compute-bound,
latency-bound, shared-memory heavy) side by side in each mode, on the GPU
through slatec's runtime:

  sequential  one after another, each alone on all SMs (the baseline)
  streams     all at once on all SMs: the hardware shares
  mps         one process per kernel under the MPS daemon (needs
              'nvidia-cuda-mps-control -d'), by default and at the best
              CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  green       green contexts: the best static split at the driver's
              granularity (CUDA 12.4+)
  static      slatec SM ranges: the best static split
  scheduler   runtime.Scheduler following the Slate plan (its table,
              refined by the profiles' model, up to three at once),
              resizing on arrival and completion
  stm         Liang's STM plan, phase after phase
  oracle      every split, survivors grown to all SMs when one ends

The baselines (sequential, streams, mps, green) launch the kernels as
written where the driver allows (CUDA 12.4+), the slatec modes their
persistent workers. A mode this machine cannot run is reported unavailable,
not failed. The
planners' profiles come from --profiles (slatec profile; --profile-commands
prints the commands) or are measured first; --partners then times each
kernel beside each kernel it shares a workload with (the profiles' beside),
which the scheduler's model uses for those pairs. The report (stdout) gives per
workload and mode the makespan, gain over sequential, STP and ANTT (Luley),
the planner's prediction, and the issue's targets. --json writes
DIR/corun.json (bench/results/corun.schema.json), --plot DIR/gain.svg,
DIR/sweep-*.svg and DIR/gantt.svg; files are written only once every
measurement is done. The modes the targets compare (sequential, streams,
scheduler) take their repetitions in rotation, one run of each per round,
so that a drift over a workload's runs falls on all three; the median run
of each counts.

--quick: 5 workloads, coarser sweeps (8 SMs, 16 for triples), 2 repetitions
(about 5 minutes on an H100); the full run has every workload, sweeps of 2
SMs (8 for triples) and 3 repetitions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, fl) },
	}
	f := cmd.Flags()
	f.BoolVar(&fl.quick, "quick", false, "a short run: 5 workloads, coarse sweeps, 2 repetitions")
	f.StringSliceVar(&fl.workloads, "workloads", nil, "workloads to run: kernel names joined with + (triad_f4+fma_chain), or all, complementary, pairs, triples (default: all; with --quick its 5)")
	f.StringSliceVar(&fl.modes, "modes", []string{"all"}, "modes to run: sequential, streams, mps, green, static, scheduler, stm, oracle, or all (sequential always runs)")
	f.StringVar(&fl.out, "out", "bench-out", "directory for --json and --plot")
	f.BoolVar(&fl.json, "json", false, "write DIR/corun.json")
	f.BoolVar(&fl.plot, "plot", false, "write the SVG plots into DIR")
	f.StringVar(&fl.profiles, "profiles", "", "profiles of the benchmark kernels on this GPU (slatec profile; default: measure them first)")
	f.IntVar(&fl.reps, "reps", 0, "repetitions of each configuration; the median counts (default 3, with --quick 2)")
	f.IntVar(&fl.device, "device", 0, "CUDA device ordinal")
	f.Float64Var(&fl.peakBW, "peak-bw", 0, "device peak DRAM bandwidth in GB/s (default: from the driver's memory clock and bus width)")
	f.DurationVar(&fl.timeout, "timeout", time.Minute, "longest one run of a workload may take")
	f.BoolVar(&fl.profileCommands, "profile-commands", false, "print the slatec profile command of each benchmark kernel, appending to --profiles FILE (default profiles.json), and exit")
	f.BoolVar(&fl.list, "list", false, "list the kernels and workloads and exit")
	f.StringSliceVar(&fl.combine, "combine", nil, "combine the corun.json files of a suite run in parts (--workloads per device call) into one: prints the report, --json/--plot write into --out; no GPU")
	f.StringArrayVar(&fl.probes, "probe", nil, "instead of the suite, probe one workload on one split (kernels@split, as triad_f4+gemm_tiled@40:92, or fma_chain@132 for one kernel against its native launch): every kernel as a worker, a two-wave worker and natively in a green context, together and alone, with each worker range's workers per SM sampled mid-run; repeatable; --json writes DIR/probe.json")
	f.DurationVar(&fl.probeAt, "probe-at", 500*time.Microsecond, "with --probe: when the sampling run reads the workers per SM")
	f.StringVar(&fl.trace, "trace", "", "append the scheduler mode's decisions of every run to FILE (ms from the run's start, event, kernel, SM range; then each kernel's span)")
	f.BoolVar(&fl.noSoloTail, "no-solo-tail", false, "scheduler mode: launch a kernel the plan runs alone only once the one before it has ended, instead of letting its blocks fill the SMs that one's last wave frees (for comparing the two)")
	f.BoolVar(&fl.noDeferredGrow, "no-deferred-grow", false, "scheduler mode: grow a kernel onto its partner's SMs when the host notices the partner's end, instead of arming the grow on the GPU at the co-run's start (for comparing the two)")
	f.BoolVar(&fl.partners, "partners", false, "before planning, time each kernel on a quarter of the SMs beside each kernel it shares a workload with on the rest (the profiles' beside: how much that partner slows it, which the planners' stream curves only estimate); with --json the profiles so completed go to DIR/profiles.json")
	f.IntVar(&fl.fake, "fake", 0, "run on a fake device of N SMs (a model, for tests and demonstrations; no GPU)")
	f.StringVar(&fl.mpsChild, "mps-child", "", "internal: serve one kernel for the mps mode's parent process")
	_ = f.MarkHidden("fake")
	_ = f.MarkHidden("mps-child")
	return cmd
}

// benchPlan is what the flags ask for, checked before the GPU is touched.
type benchPlan struct {
	workloads []corun.Workload
	modes     []corun.Mode
	opts      corun.Options
	sweepStep int // of in-process profiles
	sweep     string
}

func checkBenchFlags(fl benchFlags) (*benchPlan, error) {
	p := &benchPlan{}
	var err error
	if p.workloads, err = corun.SelectWorkloads(corun.Workloads(corun.Catalogue()), fl.workloads, fl.quick); err != nil {
		return nil, usagef("--workloads: %v", err)
	}
	if p.modes, err = corun.ParseModes(fl.modes); err != nil {
		return nil, usagef("--modes: %v", err)
	}
	switch {
	case fl.reps < 0:
		return nil, usagef("--reps must be at least 1, got %d", fl.reps)
	case fl.device < 0:
		return nil, usagef("--device must be a device ordinal (0, 1, ...), got %d", fl.device)
	case fl.peakBW < 0:
		return nil, usagef("--peak-bw must be a positive number of GB/s, got %v", fl.peakBW)
	case fl.timeout <= 0:
		return nil, usagef("--timeout must be positive, got %v", fl.timeout)
	case fl.fake < 0 || fl.fake == 1:
		return nil, usagef("--fake needs at least 2 SMs, got %d", fl.fake)
	case (fl.json || fl.plot) && strings.TrimSpace(fl.out) == "":
		return nil, usagef("--out must name a directory for --json and --plot")
	}
	p.opts = corun.Options{Reps: fl.reps, Step: 2, TripleStep: 8, RunTimeout: fl.timeout}
	p.sweepStep, p.sweep = 4, "step:4"
	if fl.quick {
		p.opts.Step, p.opts.TripleStep = 8, 16
		p.opts.MPSPercentages = []int{50}
		p.sweepStep, p.sweep = 8, "step:8"
		if fl.reps == 0 {
			p.opts.Reps = 2
		}
	}
	return p, nil
}

func runBench(cmd *cobra.Command, fl benchFlags) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if fl.mpsChild != "" {
		return runMPSChild(cmd, fl)
	}
	bp, err := checkBenchFlags(fl)
	if err != nil {
		return err
	}
	if len(fl.combine) > 0 {
		var parts []*corun.Document
		for _, f := range fl.combine {
			d, err := corun.ReadDocument(f)
			if err != nil {
				return err
			}
			parts = append(parts, d)
		}
		doc, err := corun.Combine(parts)
		if err != nil {
			return fmt.Errorf("--combine: %w", err)
		}
		return writeBenchOutputs(stdout, stderr, fl, doc, nil)
	}
	if fl.list {
		listBench(stdout, bp.workloads)
		return nil
	}
	if fl.profileCommands {
		self := "slatec"
		if len(os.Args) > 0 && strings.HasSuffix(os.Args[0], "slatec") {
			self = os.Args[0]
		}
		dst := fl.profiles
		if dst == "" {
			dst = "profiles.json"
		}
		for _, k := range corun.Catalogue() {
			line := k.ProfileCommand(self, dst, bp.sweep)
			if fl.peakBW > 0 {
				line += fmt.Sprintf(" --peak-bw %g", fl.peakBW)
			}
			fmt.Fprintln(stdout, line)
		}
		return nil
	}

	// Read the profiles before measuring anything: a broken file should
	// not cost a run.
	var ps *plan.ProfileSet
	source := "measured"
	if fl.profiles != "" {
		if ps, err = plan.ReadProfileFile(fl.profiles); err != nil {
			return reportProfileFileError(stderr, fl.profiles, err)
		}
		source = filepath.Base(fl.profiles)
	}

	var dev corun.Device
	if fl.fake > 0 {
		dev = corun.NewFake(corun.FakeOptions{SMs: fl.fake, GreenGranularity: 2})
	} else {
		dev, err = openBenchDevice(fl.device, fl.peakBW)
		if err != nil {
			if corun.NoGPU(err) {
				var le *runtime.LibraryError
				if errors.As(err, &le) {
					return fmt.Errorf("bench runs kernels on a GPU and there is none here: %s", le.Summary())
				}
				return fmt.Errorf("bench runs kernels on a GPU and there is none here: %v", err)
			}
			return err
		}
	}
	defer dev.Close()
	info := dev.Info()
	if ps != nil && ps.Device.SMs != info.SMs {
		return usagef("--profiles %s is for %s (%d SMs), this is %s (%d SMs)", fl.profiles, ps.Device.Name, ps.Device.SMs, info.Name, info.SMs)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(fl.probes) > 0 {
		return runProbes(ctx, stdout, fl, dev, ps)
	}
	pr := newBenchProgress(stderr)
	if ps == nil {
		sweep := corun.ProfileSweep(info.SMs, bp.sweepStep)
		ks := corun.Catalogue()
		n, i := len(ks)*len(sweep), 0
		ps, err = corun.MeasureProfiles(ctx, dev, ks, sweep, bp.opts.Reps, func(k string, m int) {
			pr.step(i, n, fmt.Sprintf("profiling %s on %d SMs", k, m))
			i++
		})
		pr.finish()
		if err != nil {
			return err
		}
	}
	var profilesOut []byte
	if fl.partners {
		pairs := corun.PartnerPairs(bp.workloads)
		i, n := 0, len(pairs)*bp.opts.Reps
		err := corun.MeasurePartners(ctx, dev, ps, pairs, bp.opts.Reps, func(v, p string) {
			pr.step(i, n, fmt.Sprintf("%s beside %s", v, p))
			i++
		})
		pr.finish()
		if err != nil {
			return fmt.Errorf("--partners: %w", err)
		}
		source += " + partners measured"
		if fl.json {
			if profilesOut, err = ps.Marshal(); err != nil {
				return err
			}
		}
	}
	if fl.fake == 0 {
		if exe, err := os.Executable(); err == nil {
			mps := &corun.ProcessMPS{Exe: exe, Args: []string{"bench", "--device", fmt.Sprint(fl.device), "--mps-child"}}
			defer mps.Close()
			bp.opts.MPS = mps
		}
	}
	bp.opts.NoDeferredGrow = fl.noDeferredGrow
	bp.opts.NoSoloTail = fl.noSoloTail
	bp.opts.Progress = func(p corun.Progress) { pr.step(p.Index, p.Total, fmt.Sprintf("%s: %s", p.Workload, p.Mode)) }
	if fl.trace != "" {
		f, err := os.OpenFile(fl.trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		defer f.Close()
		bp.opts.Trace = f
	}
	b := &corun.Bench{Dev: dev, Profiles: ps, Opts: bp.opts}
	outs, err := b.Run(ctx, bp.workloads, bp.modes)
	pr.finish()
	if err != nil {
		return err
	}

	_, commit := BuildInfo()
	kn := map[string][]string{}
	for _, w := range bp.workloads {
		for _, k := range w.Kernels {
			kn[w.Name] = append(kn[w.Name], k.Name)
		}
	}
	doc := corun.NewDocument(info.Name, info.SMs, commit, benchNow().UTC().Format("2006-01-02"), fl.quick, source, outs, kn)
	if td, ok := dev.(corun.Timed); ok {
		doc.Timing = td.Timing()
	}
	if od, ok := dev.(corun.Ordered); ok {
		doc.SMOrder = od.SMOrder()
	}

	return writeBenchOutputs(stdout, stderr, fl, doc, profilesOut)
}

// writeBenchOutputs prints the report of doc and writes --json and --plot
// into --out. Everything is rendered before anything is written.
func writeBenchOutputs(stdout, stderr io.Writer, fl benchFlags, doc *corun.Document, profiles []byte) error {
	files := map[string][]byte{}
	if fl.json {
		data, err := doc.Marshal()
		if err != nil {
			return err
		}
		files["corun.json"] = data
		if profiles != nil {
			files["profiles.json"] = profiles
		}
	}
	if fl.plot {
		plots, err := corun.Plots(doc)
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		for n, b := range plots {
			files[n] = b
		}
	}
	writeBenchReport(stdout, doc)
	if len(files) == 0 {
		return nil
	}
	if err := os.MkdirAll(fl.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := emit.WriteFileAtomic(filepath.Join(fl.out, n), files[n], stdout); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "slatec: wrote %s in %s\n", strings.Join(names, ", "), fl.out)
	return nil
}

func listBench(w io.Writer, ws []corun.Workload) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tCLASS\tGRID\tBLOCK\tMB MOVED\tGFLOP")
	for _, k := range corun.Catalogue() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.1f\n", k.Name, k.Class, k.Grid.Count(), k.Block.Count(), float64(k.Bytes)/1e6, k.Flops/1e9)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tCOMPLEMENTARY")
	for _, x := range ws {
		fmt.Fprintf(tw, "%s\t%v\n", x.Name, x.Complementary)
	}
	tw.Flush()
}

// writeBenchReport prints the rows and the targets.
func writeBenchReport(w io.Writer, d *corun.Document) {
	fmt.Fprintf(w, "slatec bench on %s (%d SMs), commit %s, profiles %s\n", d.Device, d.SMs, d.Commit, d.Profiles)
	if d.SMOrder != "" {
		fmt.Fprintf(w, "SM order: %s\n", d.SMOrder)
	}
	if d.Timing != "" {
		fmt.Fprintf(w, "timing: %s\n", d.Timing)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tmode\tmakespan ms\twall ms\tgain\tSTP\tANTT\tpredicted ms\tsplit\t")
	for _, r := range d.Rows {
		mode := string(r.Mode)
		if r.Setting != "" {
			mode += " " + r.Setting
		}
		pred := "-"
		if r.PredictedMs != nil {
			pred = fmt.Sprintf("%.4f", *r.PredictedMs)
		}
		split := r.Split
		if split == "" {
			split = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%+.1f%%\t%.3f\t%.3f\t%s\t%s\t\n", r.Workload, mode, r.MakespanMs, r.WallMs, 100*r.Gain, r.STP, r.ANTT, pred, split)
	}
	tw.Flush()
	for _, u := range d.Unavailable {
		fmt.Fprintf(w, "unavailable: %s %s: %s\n", u.Workload, u.Mode, u.Reason)
	}
	for _, r := range d.Rows {
		for _, n := range r.Notes {
			if strings.HasPrefix(n, "implausible:") {
				fmt.Fprintf(w, "%s %s %s: %s\n", r.Workload, r.Mode, r.Setting, n)
			}
		}
	}
	s := d.Summarize()
	fmt.Fprintf(w, "\nresizes that drained: %d, latency p50 %.1f us, p99 %.1f us; grew without a drain: %d\n",
		d.ResizeLatency.Count, d.ResizeLatency.P50Us, d.ResizeLatency.P99Us, d.ResizeLatency.Grows)
	if rl := d.ResizeLatency; rl.WithTask > 0 {
		fmt.Fprintf(w, "drain minus one task (target: p99 <= %.0f us): p99 %.1f us over %d drains; %d above one task + %.0f us\n",
			float64(corun.DrainTarget)/1e3, rl.OverTaskP99Us, rl.WithTask, rl.OverTarget, float64(corun.DrainTarget)/1e3)
	}
	if len(s.SchedulerShare) > 0 {
		fmt.Fprintln(w, "scheduler gain as a share of the oracle's (complementary workloads; target >= 0.90):")
		for _, k := range sortedKeys(s.SchedulerShare) {
			fmt.Fprintf(w, "  %s %.3f\n", k, s.SchedulerShare[k])
		}
	}
	if len(s.SchedulerVsBaseline) > 0 {
		fmt.Fprintln(w, "scheduler makespan / best of sequential and streams (target <= 1.01):")
		for _, k := range sortedKeys(s.SchedulerVsBaseline) {
			fmt.Fprintf(w, "  %s %.3f\n", k, s.SchedulerVsBaseline[k])
		}
	}
	if s.Predictions > 0 {
		fmt.Fprintf(w, "predicted vs measured: median error %.1f%% over %d rows (target <= 10%%)\n", 100*s.PredictionError, s.Predictions)
	}
	fmt.Fprintln(w, "\ntargets:")
	if s.Complementary > 0 {
		fmt.Fprintf(w, "  gain over sequential, geomean over %d complementary workloads: scheduler %.3f, oracle %.3f: share %.2f (target >= 0.90)\n",
			s.Complementary, s.SchedulerGain, s.OracleGain, s.ShareGeomean)
	}
	if n := len(s.SchedulerVsBaseline); n > 0 {
		fmt.Fprintf(w, "  scheduler <= 1.01 x best of sequential and streams: %d of %d workloads (target: all)\n", s.NeverWorse, n)
	}
	if s.GreenRuns > 0 || s.MPSRuns > 0 {
		fmt.Fprintf(w, "  scheduler faster than the best green split on %d of %d complementary workloads, than MPS (better setting) on %d of %d (target: all)\n",
			s.BeatsGreen, s.GreenRuns, s.BeatsMPS, s.MPSRuns)
	}
	if len(s.StaticOverGreen) > 0 {
		fmt.Fprintf(w, "  static split / green split at the splits both measured (the workers' cost beside a partner), median over %d workloads: %.3f\n",
			len(s.StaticOverGreen), s.StaticOverGreenMedian)
	}
}

func sortedKeys(m map[string]float64) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// runMPSChild is the child side of the mps mode (corun.ProcessMPS).
func runMPSChild(cmd *cobra.Command, fl benchFlags) error {
	var k *corun.Kernel
	for _, x := range corun.Catalogue() {
		if x.Name == fl.mpsChild {
			k = x
		}
	}
	if k == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "error no kernel %s\n", fl.mpsChild)
		return usagef("--mps-child: no kernel %s", fl.mpsChild)
	}
	dev, err := openBenchDevice(fl.device, fl.peakBW)
	if err != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "error %v\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return err
	}
	defer dev.Close()
	return corun.ServeMPSChild(context.Background(), dev, k, cmd.InOrStdin(), cmd.OutOrStdout(), time.Now)
}

// benchProgress shows progress on stderr: a bar on a terminal, else one
// line per step.
type benchProgress struct {
	w   io.Writer
	tty bool
	bar *progressbar.ProgressBar
}

func newBenchProgress(w io.Writer) *benchProgress { return &benchProgress{w: w, tty: isTerminal(w)} }

func (p *benchProgress) step(i, n int, what string) {
	if !p.tty {
		fmt.Fprintf(p.w, "slatec: [%d/%d] %s\n", i+1, n, what)
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions(n,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
		)
	}
	p.bar.Describe(what)
	_ = p.bar.Set(i)
}

// finish ends the bar (the next phase starts a new one).
func (p *benchProgress) finish() {
	if p.bar != nil {
		if !p.bar.IsFinished() {
			_ = p.bar.Finish()
		}
		p.bar = nil
	}
}

// probeDoc is DIR/probe.json.
type probeDoc struct {
	Device string           `json:"device"`
	Commit string           `json:"commit"`
	Date   string           `json:"date"`
	Rows   []corun.ProbeRow `json:"rows"`
}

// runProbes runs --probe: each spec's table on stdout, the rows as JSON.
func runProbes(ctx context.Context, stdout io.Writer, fl benchFlags, dev corun.Device, ps *plan.ProfileSet) error {
	info := dev.Info()
	var specs []corun.ProbeSpec
	for _, p := range fl.probes {
		s, err := corun.ParseProbe(p, info.SMs)
		if err != nil {
			return usagef("--probe: %v", err)
		}
		specs = append(specs, s)
	}
	reps := fl.reps
	if reps == 0 {
		reps = 10
	}
	b := &corun.Bench{Dev: dev, Profiles: ps, Opts: corun.Options{RunTimeout: fl.timeout}}
	_, commit := BuildInfo()
	doc := probeDoc{Device: info.Name, Commit: commit, Date: benchNow().UTC().Format("2006-01-02")}
	fmt.Fprintf(stdout, "device %s (%d SMs), commit %s, %d reps\n", info.Name, info.SMs, commit, reps)
	for _, s := range specs {
		rows, err := b.Probe(ctx, s, reps, fl.probeAt)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, corun.FormatProbe(rows, s.Kernels))
		doc.Rows = append(doc.Rows, rows...)
	}
	if !fl.json {
		return nil
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(fl.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return emit.WriteFileAtomic(filepath.Join(fl.out, "probe.json"), append(data, '\n'), stdout)
}
