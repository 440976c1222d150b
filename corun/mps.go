package corun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MPSRunner runs a workload's kernels in separate processes, one kernel
// each, started together, under NVIDIA's MPS daemon.
type MPSRunner interface {
	// Unavailable says why MPS cannot be used here ("" when it can).
	Unavailable() string
	// Run runs the kernels once with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
	// pct (0: unset) and returns each kernel's end in ms from the earliest
	// start, with the makespan, and the wall makespan (Outcome.WallMs:
	// earliest launch to the last end a child saw, on the host's clock).
	Run(ctx context.Context, ks []*Kernel, pct int) (ends []float64, makespan, wall float64, err error)
}

// mps runs the mps mode: the default setting, then each thread
// percentage; the best percentage is reported beside the default.
func (b *Bench) mps(ctx context.Context, w Workload) ([]Outcome, error) {
	if b.Opts.MPS == nil {
		return []Outcome{{Setting: "default", Unavailable: "no MPS runner for this device"}}, nil
	}
	if why := b.Opts.MPS.Unavailable(); why != "" {
		return []Outcome{{Setting: "default", Unavailable: why}}, nil
	}
	run := func(pct int) (runResult, error) {
		return b.median(ctx, func() (runResult, error) {
			ends, mk, wall, err := b.Opts.MPS.Run(ctx, w.Kernels, pct)
			return runResult{makespan: mk, ends: ends, wall: wall}, err
		})
	}
	def, err := run(0)
	if err != nil {
		return nil, err
	}
	out := []Outcome{def.outcome()}
	out[0].Setting = "default"
	var best *Outcome
	for _, pct := range b.Opts.MPSPercentages {
		r, err := run(pct)
		if err != nil {
			return nil, fmt.Errorf("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d: %w", pct, err)
		}
		if best == nil || r.makespan < best.MakespanMs {
			o := r.outcome()
			o.Setting = fmt.Sprintf("pct=%d", pct)
			best = &o
		}
	}
	if best != nil {
		out = append(out, *best)
	}
	return out, nil
}

// MPSPipeDir is where the MPS control daemon of the mps mode keeps its
// pipes: $SLATEC_MPS_PIPE_DIRECTORY, else $CUDA_MPS_PIPE_DIRECTORY, else
// the default. The first lets the bench's own process stay a plain CUDA
// client (so that the other modes do not run through MPS) while its
// children get CUDA_MPS_PIPE_DIRECTORY set to it.
func MPSPipeDir() string {
	for _, v := range []string{"SLATEC_MPS_PIPE_DIRECTORY", "CUDA_MPS_PIPE_DIRECTORY"} {
		if d := os.Getenv(v); d != "" {
			return d
		}
	}
	return "/tmp/nvidia-mps"
}

// MPSDaemonRunning reports whether an MPS control daemon serves this
// environment: its control pipe exists in MPSPipeDir. It says why not
// otherwise.
func MPSDaemonRunning() (bool, string) {
	dir := MPSPipeDir()
	if _, err := os.Stat(filepath.Join(dir, "control")); err != nil {
		hint := "start it with 'nvidia-cuda-mps-control -d'"
		if _, lerr := exec.LookPath("nvidia-cuda-mps-control"); lerr != nil {
			hint = "nvidia-cuda-mps-control is not installed"
		}
		return false, fmt.Sprintf("no MPS daemon (no control pipe in %s; %s)", dir, hint)
	}
	return true, ""
}

// ProcessMPS is the MPSRunner of `slatec bench`: each kernel runs in a
// child process (Exe with Args and the kernel's name, i.e. `slatec bench
// --mps-child KERNEL`), all started together under the MPS daemon. The
// children of one workload and percentage are kept across repetitions
// (their CUDA start-up is not what is measured): each "go" line on a
// child's stdin runs its kernel once on all SMs, and the child answers
// "done START_UNIX_NS GPU_NS END_UNIX_NS" (see ServeMPSChild).
type ProcessMPS struct {
	Exe  string
	Args []string
	// Ready bounds a child's start-up (CUDA init, NVRTC or the CUBIN
	// cache, buffers, a warm-up run); default 2 minutes.
	Ready time.Duration

	key      string
	children []*mpsChild
}

type mpsChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// Unavailable implements MPSRunner.
func (p *ProcessMPS) Unavailable() string {
	if ok, why := MPSDaemonRunning(); !ok {
		return why
	}
	return ""
}

// Run implements MPSRunner.
func (p *ProcessMPS) Run(ctx context.Context, ks []*Kernel, pct int) ([]float64, float64, float64, error) {
	key := fmt.Sprintf("%s@%d", names(ks), pct)
	if key != p.key {
		p.Close()
		if err := p.spawn(ctx, ks, pct); err != nil {
			p.Close()
			return nil, 0, 0, err
		}
		p.key = key
	}
	for _, c := range p.children {
		if _, err := io.WriteString(c.in, "go\n"); err != nil {
			p.Close()
			return nil, 0, 0, fmt.Errorf("MPS child: %w", err)
		}
	}
	starts := make([]int64, len(ks))
	gpu := make([]int64, len(ks))
	seen := make([]int64, len(ks))
	for i, c := range p.children {
		line, err := c.line(ctx, 10*time.Minute)
		if err == nil {
			_, err = fmt.Sscanf(line, "done %d %d %d", &starts[i], &gpu[i], &seen[i])
			if err != nil {
				err = fmt.Errorf("unexpected answer %q", line)
			}
		}
		if err != nil {
			p.Close()
			return nil, 0, 0, fmt.Errorf("MPS child running %s: %w", ks[i].Name, err)
		}
	}
	t0 := starts[0]
	for _, s := range starts {
		t0 = min(t0, s)
	}
	ends := make([]float64, len(ks))
	makespan, wall := 0.0, 0.0
	for i := range ks {
		ends[i] = float64(starts[i]-t0+gpu[i]) / 1e6
		makespan = max(makespan, ends[i])
		wall = max(wall, float64(seen[i]-t0)/1e6)
	}
	return ends, makespan, wall, nil
}

func (p *ProcessMPS) spawn(ctx context.Context, ks []*Kernel, pct int) error {
	ready := p.Ready
	if ready <= 0 {
		ready = 2 * time.Minute
	}
	for _, k := range ks {
		cmd := exec.Command(p.Exe, append(append([]string(nil), p.Args...), k.Name)...)
		cmd.Env = append(os.Environ(), "CUDA_MPS_PIPE_DIRECTORY="+MPSPipeDir())
		if pct > 0 {
			cmd.Env = append(cmd.Env, fmt.Sprintf("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d", pct))
		}
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting an MPS child: %w", err)
		}
		c := &mpsChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}
		p.children = append(p.children, c)
	}
	for i, c := range p.children {
		line, err := c.line(ctx, ready)
		if err == nil && line != "ready" {
			err = fmt.Errorf("unexpected first line %q", line)
		}
		if err != nil {
			return fmt.Errorf("MPS child for %s: %w", ks[i].Name, err)
		}
	}
	return nil
}

// line reads the child's next line, within timeout.
func (c *mpsChild) line(ctx context.Context, timeout time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		if c.out.Scan() {
			ch <- res{s: strings.TrimSpace(c.out.Text())}
			return
		}
		err := c.out.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		ch <- res{err: err}
	}()
	select {
	case r := <-ch:
		if r.err == nil && strings.HasPrefix(r.s, "error ") {
			return "", errors.New(strings.TrimPrefix(r.s, "error "))
		}
		return r.s, r.err
	case <-time.After(timeout):
		return "", fmt.Errorf("no answer in %v", timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close ends the children (closing their stdin) and waits for them.
func (p *ProcessMPS) Close() {
	for _, c := range p.children {
		c.in.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	}
	p.children, p.key = nil, ""
}

// ServeMPSChild is the child side of ProcessMPS: it runs k once as the
// baselines do (natively where dev can, else its worker on all SMs; a
// warm-up that also allocates its buffers), says "ready", then for each
// "go" line runs k again and answers "done START GPU END" (the launch's
// Unix time, the job's GPU time, and the Unix time its end was seen, in
// ns), until stdin ends.
func ServeMPSChild(ctx context.Context, dev Device, k *Kernel, in io.Reader, out io.Writer, now func() time.Time) error {
	b := &Bench{Dev: dev}
	start1, _ := b.baselineStarter([]*Kernel{k})
	// The device clock's zero in Unix ns, for spans from GPU stamps.
	epochUnix := now().UnixNano() - dev.Now().Nanoseconds()
	once := func() (int64, time.Duration, int64, error) {
		start := now().UnixNano()
		j, _, err := start1(0)
		if err != nil {
			return 0, 0, 0, err
		}
		if _, err := dev.WaitAny(ctx, []Job{j}); err != nil {
			return 0, 0, 0, err
		}
		seen := now().UnixNano()
		s, e := j.Span()
		if sj, ok := j.(stampedJob); ok && sj.Stamped() {
			// The kernel's own start on the GPU clock, which every
			// process on the device shares.
			start = epochUnix + s.Nanoseconds()
		}
		return start, e - s, seen, nil
	}
	if _, _, _, err := once(); err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return err
	}
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "go" {
			continue
		}
		start, gpu, seen, err := once()
		if err != nil {
			fmt.Fprintf(out, "error %v\n", err)
			return err
		}
		fmt.Fprintf(out, "done %d %d %d\n", start, gpu.Nanoseconds(), seen)
	}
	return sc.Err()
}
