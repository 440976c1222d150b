package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/emit"
	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/profile"
	"github.com/slatec/slatec/runtime"
)

func init() { register(newProfileCmd) }

type profileFlags struct {
	kernel, args, name string
	grid, block, shmem string
	sms                string
	reps               int
	bytesPerBlock      string
	out, plot          string
	appendTo           bool
	includes           []string
	peakBW             float64
	iters, device      int
	timeout            time.Duration
	dramSensitivity    bool
}

// isTerminal reports whether progress goes to a terminal (a variable so
// that tests can see the progress bar).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// openProfileDevice opens the GPU to profile on. Tests replace it with a
// fake device, so that the whole command runs without a GPU.
var openProfileDevice = func(ordinal int, c *runtime.Compiler) (profile.Device, error) {
	return profile.OpenCUDA(ordinal, c)
}

func newProfileCmd() *cobra.Command {
	var fl profileFlags
	cmd := &cobra.Command{
		Use:   "profile FILE --kernel K --args SPEC [flags]",
		Short: "Measure a kernel's latency R[m] and bandwidth B[m] on m = 1..M SMs, for the planners",
		Long: `profile runs a kernel of FILE on a GPU as a persistent worker bound to the SMs
[0, m-1], for each SM count m of the sweep, and writes its profile
(format slatec-profile/1, see plan/FORMAT.md): R[m], the median GPU time of
--reps runs after one warm-up, and B[m] = blocks x --bytes-per-block / R[m].
The kernel is transformed as slatec gen does (device-only, no launch
rewriting), compiled with NVRTC for the device (CUBINs are cached on disk),
and launched over the application's logical grid, so only the SM count
changes between measurements.

--args gives the kernel's arguments in order, comma-separated:
  buf:<elem>:<count>   device buffer of deterministic random data
                       (floats in [0,1), integers in [0,256))
  out:<elem>:<count>   zeroed device buffer
  <elem>:<value>       scalar: i32:16M, u64:0x100, f32:2.5, bool:true
elem is f32 f64 f16 bf16 i8 u8 i16 u16 i32 u32 i64 u64; counts and
integers take K, M, G (binary). The items are checked against the kernel's
parameters: pointers take buffers of the pointee's type, scalars must have
the parameter's size.

--sms: all (1..M), step:N (1, N, 2N, ..., M), or a list: 1,2,4,8 or 1-16,132
or 1,2,4,...,132 (a progression continued up to the last item).

The profile goes to -o (default stdout); --append adds the kernel to an
existing profile file (replacing a kernel of the same name), which must be
for the same device. --plot draws the speedup R[1]/R[m] and B[m] against m
as SVG (the Slate paper's Fig. 1).

Example (STREAM triad, 3 x 4 bytes per thread):

  slatec profile triad.cu --kernel triad --block 256 --bytes-per-block 3072 \
    --args 'buf:f32:16M,buf:f32:16M,out:f32:16M,i32:16M,f32:2.5' \
    --sms step:8 -o profiles.json --append --plot triad.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runProfile(cmd, args[0], fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.kernel, "kernel", "", "the kernel to profile (required; ns::name for a kernel in a namespace)")
	f.StringVar(&fl.args, "args", "", "the kernel's arguments, e.g. 'buf:f32:16M,out:f32:16M,i32:16M,f32:2.5' (required)")
	f.StringVar(&fl.grid, "grid", "", "logical grid: N, XxY or XxYxZ (default: one thread per element of the largest buffer)")
	f.StringVar(&fl.block, "block", "256", "block shape: N, XxY or XxYxZ")
	f.StringVar(&fl.shmem, "shmem", "0", "dynamic shared memory per block in bytes (K suffix allowed)")
	f.StringVar(&fl.sms, "sms", "all", "SM counts to measure: all, step:N, or a list such as 1,2,4,...,132")
	f.IntVar(&fl.reps, "reps", profile.DefaultReps, "timed runs per SM count; R[m] is their median")
	f.StringVar(&fl.bytesPerBlock, "bytes-per-block", "0", "DRAM bytes one logical block moves, for B[m] (0: bandwidth not measured)")
	f.StringVarP(&fl.out, "output", "o", "-", "profile file to write, or - for stdout")
	f.BoolVar(&fl.appendTo, "append", false, "add the kernel to the existing profile file -o (same device), replacing one of the same name")
	f.StringVar(&fl.plot, "plot", "", "also write the speedup and bandwidth curves as SVG to this file")
	f.StringSliceVarP(&fl.includes, "include", "I", nil, "directories to search for #include \"...\" files")
	f.StringVar(&fl.name, "name", "", "the kernel's name in the profile (default: the kernel's name)")
	f.Float64Var(&fl.peakBW, "peak-bw", 0, "device peak DRAM bandwidth in GB/s (default: from the driver's memory clock and bus width)")
	f.IntVar(&fl.iters, "iters", 0, "logical blocks per task of the workers (0: the runtime's choice)")
	f.IntVar(&fl.device, "device", 0, "CUDA device ordinal")
	f.DurationVar(&fl.timeout, "timeout", time.Minute, "longest a single run may take (0: no limit)")
	f.BoolVar(&fl.dramSensitivity, "dram-sensitivity", true, "also time the kernel on half the SMs beside a DRAM stream on the other half (dram_sensitivity: how much a loaded DRAM slows it) and on an eighth and a quarter of it (dram_loaded: the slowdown at lighter loads, with the stream's bandwidth)")
	return cmd
}

// profileInput is what the flags say, checked before any file or device
// is touched.
type profileInput struct {
	args          []profile.Arg
	sweep         profile.Sweep
	block, grid   runtime.Dim3
	shared        uint32
	bytesPerBlock int64
}

func checkProfileFlags(fl profileFlags) (*profileInput, error) {
	in := &profileInput{}
	if strings.TrimSpace(fl.kernel) == "" {
		return nil, usagef("--kernel is required: name the kernel to profile")
	}
	if strings.TrimSpace(fl.args) == "" {
		return nil, usagef("--args is required: one item per kernel parameter, e.g. --args 'buf:f32:1M,out:f32:1M,i32:1M'")
	}
	var err error
	if in.args, err = profile.ParseArgs(fl.args); err != nil {
		return nil, usageError{err}
	}
	if in.sweep, err = profile.ParseSweep(fl.sms); err != nil {
		return nil, usageError{err}
	}
	if in.block, err = profile.ParseDim3(fl.block); err != nil {
		return nil, usagef("--block: %v", err)
	}
	if t := in.block.Count(); t > 1024 {
		return nil, usagef("--block %s has %d threads; CUDA allows at most 1024", fl.block, t)
	}
	if fl.grid != "" {
		if in.grid, err = profile.ParseDim3(fl.grid); err != nil {
			return nil, usagef("--grid: %v", err)
		}
		if in.grid.Count() > math.MaxInt32 {
			return nil, usagef("--grid %s has %d blocks; a profile holds at most %d", fl.grid, in.grid.Count(), math.MaxInt32)
		}
	}
	sh, err := profile.ParseSize(fl.shmem)
	if err != nil || sh > math.MaxUint32 {
		return nil, usagef("--shmem must be a byte count such as 0, 4096 or 48K, got %q", fl.shmem)
	}
	in.shared = uint32(sh)
	if in.bytesPerBlock, err = profile.ParseSize(fl.bytesPerBlock); err != nil {
		return nil, usagef("--bytes-per-block must be a byte count such as 3072 or 12K, got %q", fl.bytesPerBlock)
	}
	switch {
	case fl.reps < 1:
		return nil, usagef("--reps must be at least 1, got %d", fl.reps)
	case fl.iters < 0 || fl.iters > 1<<20:
		return nil, usagef("--iters must be between 0 (automatic) and %d, got %d", 1<<20, fl.iters)
	case fl.peakBW < 0 || math.IsNaN(fl.peakBW) || math.IsInf(fl.peakBW, 0):
		return nil, usagef("--peak-bw must be a positive number of GB/s, got %v", fl.peakBW)
	case fl.timeout < 0:
		return nil, usagef("--timeout must not be negative, got %v", fl.timeout)
	case fl.device < 0:
		return nil, usagef("--device must be a device ordinal (0, 1, ...), got %d", fl.device)
	case fl.name != "" && strings.TrimSpace(fl.name) == "":
		return nil, usagef("--name must not be blank")
	case fl.appendTo && fl.out == "-":
		return nil, usagef("--append adds to a profile file: give -o FILE")
	case fl.plot == "-" && fl.out == "-":
		return nil, usagef("--plot - and the profile would both go to stdout: give -o FILE or --plot FILE")
	}
	return in, nil
}

func runProfile(cmd *cobra.Command, path string, fl profileFlags) error {
	in, err := checkProfileFlags(fl)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	for _, o := range []string{fl.out, fl.plot} {
		if o != "" && sameFile(o, path) {
			return usagef("output %s is the input %s", o, path)
		}
	}
	name, src, err := readInput(cmd, path)
	if err != nil {
		return err
	}
	prep, ds, err := profile.Prepare(name, src, fl.kernel, fl.includes)
	if err != nil {
		var d diag.Diagnostic
		var ke *profile.KernelError
		switch {
		case errors.As(err, &d):
			printDiags(cmd, []diag.Diagnostic{d})
			return silentError{exitInput}
		case errors.Is(err, profile.ErrRefused):
			printDiags(cmd, ds)
			return silentError{exitInput}
		case errors.As(err, &ke) && ke.Usage:
			return usageError{err}
		}
		return err
	}
	printDiags(cmd, ds)
	bound, err := profile.CheckArgs(in.args, prep.Layout)
	if err != nil {
		return usageError{fmt.Errorf("kernel %s: %w", prep.QualifiedName, err)}
	}
	if fl.grid == "" {
		in.grid = profile.DefaultGrid(in.args, in.block)
		if in.grid.Count() == 0 {
			return usagef("--grid is required: --args has no buffer to size the grid from")
		}
		if in.grid.Count() > math.MaxInt32 {
			return usagef("the default grid (one thread per element of the largest buffer) has %d blocks; give --grid", in.grid.Count())
		}
		fmt.Fprintf(stderr, "slatec: note: no --grid: %d blocks of %d threads, one thread per element of the largest buffer\n",
			in.grid.Count(), in.block.Count())
	}

	// Read the file to append to before measuring: a broken file should
	// not cost a sweep.
	var existing *plan.ProfileSet
	if fl.appendTo {
		ps, err := plan.ReadProfileFile(fl.out)
		switch {
		case err == nil:
			existing = ps
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stderr, "slatec: note: %s does not exist yet; --append starts it\n", fl.out)
		default:
			return reportProfileFileError(stderr, fl.out, err)
		}
	}

	// NVRTC sees the persistent source under the file's base name only,
	// so the file's own directory must be searched for its #include "...",
	// first, as a compiler would; then -I; then the CUDA headers.
	var dirs []string
	if path != "-" {
		dirs = append(dirs, filepath.Dir(path))
	}
	dirs = append(append(dirs, fl.includes...), runtime.DefaultIncludeDirs()...)
	dev, err := openProfileDevice(fl.device, &runtime.Compiler{IncludeDirs: dirs})
	if err != nil {
		if profile.NoDriver(err) {
			return fmt.Errorf("no GPU to profile on: %w", err)
		}
		return err
	}
	defer dev.Close()
	if existing != nil {
		if err := profile.SameDevice(existing.Device, dev.Info()); err != nil {
			return fmt.Errorf("--append %s: %w", fl.out, err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pr := newProfileProgress(stderr, in.grid.Count(), in.bytesPerBlock)
	req := profile.Request{
		Kernel: prep, Name: fl.name, Args: bound, SMs: in.sweep, Reps: fl.reps,
		Launch:        profile.Launch{Grid: in.grid, Block: in.block, Shared: in.shared, Iters: fl.iters},
		BytesPerBlock: in.bytesPerBlock, PeakBWGBs: fl.peakBW, RunTimeout: fl.timeout, Progress: pr.event,
		DRAMSensitivity: fl.dramSensitivity,
	}
	res, err := profile.Profile(ctx, dev, req)
	pr.finish()
	if err != nil {
		var fe *profile.FlagError
		if errors.As(err, &fe) {
			return usageError{err}
		}
		return fmt.Errorf("profiling %s: %w", prep.QualifiedName, err)
	}

	set := res.Set
	var replaced []string
	if existing != nil {
		if set, replaced, err = profile.Merge(existing, res.Set); err != nil {
			return fmt.Errorf("--append %s: %w", fl.out, err)
		}
	}
	data, err := set.Marshal()
	if err != nil {
		return err
	}
	if err := emit.WriteFileAtomic(fl.out, data, cmd.OutOrStdout()); err != nil {
		return err
	}
	if fl.plot != "" {
		if err := profile.WritePlot(fl.plot, set.Device, res.Kernel(), cmd.OutOrStdout()); err != nil {
			return fmt.Errorf("--plot: %w", err) // emit names the path
		}
	}
	writeProfileSummary(stderr, set.Device, res)
	if fl.out != "-" {
		what := "added"
		if len(replaced) > 0 {
			what = "replaced"
		}
		if existing == nil {
			what = "wrote"
		}
		fmt.Fprintf(stderr, "slatec: %s %s in %s (%d kernel(s))\n", what, res.Kernel().Name, fl.out, len(set.Kernels))
	}
	return nil
}

// reportProfileFileError prints a broken profile file's problems the way
// slatec plan does, one per line with the JSON path.
func reportProfileFileError(w io.Writer, path string, err error) error {
	var ve *plan.ValidationError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ve):
		for _, p := range ve.Problems {
			fmt.Fprintf(w, "%s: error: %s\n", path, p.Error())
		}
	case errors.As(err, &pe):
		fmt.Fprintf(w, "%s: error: %v\n", path, pe.Err)
	default:
		fmt.Fprintf(w, "%s: error: %v\n", path, err)
	}
	return silentError{exitInput}
}

// writeProfileSummary prints the result in a few lines: the curve's ends,
// the resources, the class and any notes.
func writeProfileSummary(w io.Writer, dev plan.Device, res *profile.Result) {
	k := res.Kernel()
	first, last := k.RMs[0], k.RMs[len(k.RMs)-1]
	fmt.Fprintf(w, "slatec: %s on %s (%d SMs): %d blocks x %d threads, %d registers, %d B shared, %d blocks/SM\n",
		k.Name, dev.Name, dev.SMs, k.Blocks, k.ThreadsPerBlock, k.Registers, k.SharedBytes, k.BlocksPerSM)
	fmt.Fprintf(w, "  R[%d] = %.4f ms, R[%d] = %.4f ms (speedup %.1fx from %d to %d SMs)\n",
		first.M, first.V, last.M, last.V, first.V/last.V, first.M, last.M)
	if bw := k.BWGBs[len(k.BWGBs)-1].V; bw > 0 {
		fmt.Fprintf(w, "  B[%d] = %.1f GB/s (%.0f%% of the %.0f GB/s peak)\n", last.M, bw, 100*bw/dev.PeakBWGBs, dev.PeakBWGBs)
	}
	fmt.Fprintf(w, "  class %s (%s)\n", k.Class, res.ClassReason)
	for _, n := range res.Notes {
		fmt.Fprintf(w, "slatec: note: %s\n", n)
	}
}

// profileProgress shows progress on stderr: a progress bar on a terminal,
// otherwise (logs, CI) one line per SM count, which stays readable when
// captured.
type profileProgress struct {
	w      io.Writer
	tty    bool
	bar    *progressbar.ProgressBar
	blocks int64
	bpb    int64
}

func newProfileProgress(w io.Writer, blocks uint64, bpb int64) *profileProgress {
	return &profileProgress{w: w, tty: isTerminal(w), blocks: int64(blocks), bpb: bpb}
}

func (p *profileProgress) event(e profile.Event) {
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(e.Count*e.Runs,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription("profiling"),
				progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
			)
		}
		if e.Point != nil {
			p.bar.Describe(fmt.Sprintf("m=%d R=%.3f ms", e.M, e.Point.Ms()))
		}
		_ = p.bar.Add(1)
		return
	}
	if e.Point == nil {
		return
	}
	pt := e.Point
	lo, hi := pt.Times[0], pt.Times[0]
	for _, t := range pt.Times {
		lo, hi = min(lo, t), max(hi, t)
	}
	line := fmt.Sprintf("slatec: m=%d (%d/%d): R %.4f ms (median of %d, %.4f..%.4f)", e.M, e.Index+1, e.Count,
		pt.Ms(), len(pt.Times), msOf(lo), msOf(hi))
	if p.bpb > 0 {
		line += fmt.Sprintf(", B %.1f GB/s", profile.BandwidthGBs(p.blocks, p.bpb, pt.Median))
	}
	fmt.Fprintln(p.w, line)
}

// finish completes the bar (a failed sweep leaves it where it stopped,
// on its own line).
func (p *profileProgress) finish() {
	if p.bar != nil && !p.bar.IsFinished() {
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
