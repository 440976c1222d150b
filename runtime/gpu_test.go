//go:build cgo

package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GPU tests: they need libcuda.so.1 and a device, and skip (saying so)
// without them. runtime/gpu-test.sh runs them on the GPU machine.

var gpu struct {
	once sync.Once
	dev  *Device
	mod  *Module
	skip string // why GPU tests skip
	err  error  // setup failure with a driver present: a test failure
}

// needGPU returns the shared device and the loaded testdata/worker.cu.
func needGPU(t testing.TB) (*Device, *Module) {
	t.Helper()
	gpu.once.Do(func() {
		d, err := Open(0)
		if err != nil {
			var le *LibraryError
			switch {
			case errors.As(err, &le):
				gpu.skip = le.Summary()
			case IsCUDAError(err, 100 /* CUDA_ERROR_NO_DEVICE */),
				strings.Contains(err.Error(), "no CUDA device"):
				gpu.skip = err.Error()
			default:
				gpu.err = err
			}
			return
		}
		gpu.dev = d
		c, err := (&Compiler{CacheDir: testCacheDir}).Compile(CompileRequest{Name: "worker.cu", Source: readWorker(t),
			Arch: d.Info().Arch(), NameExpressions: workerExprs})
		if err != nil {
			gpu.err = fmt.Errorf("compiling testdata/worker.cu for %s: %w", d.Info().Arch(), err)
			return
		}
		if gpu.mod, err = d.LoadModule(c); err != nil {
			gpu.err = err
		}
	})
	if gpu.skip != "" {
		t.Skipf("no CUDA driver: %s", gpu.skip)
	}
	if gpu.err != nil {
		t.Fatalf("GPU setup: %v", gpu.err)
	}
	if err := gpu.dev.Err(); err != nil {
		t.Fatalf("device unusable after an earlier test: %v", err)
	}
	return gpu.dev, gpu.mod
}

func kernel(t testing.TB, m *Module, name string, l ParamLayout) *Kernel {
	t.Helper()
	k, err := m.Kernel(name, l)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	vaddLayout  = LayoutOf("const T*", "const T*", "T*", "int")
	countLayout = LayoutOf("unsigned int*", "unsigned int*", "long long")
	spinLayout  = LayoutOf("long long")
	oobLayout   = LayoutOf("float*", "long long")
)

func alloc[T Plain](t testing.TB, d *Device, host []T) DevicePtr {
	t.Helper()
	var z T
	p, err := d.Alloc(len(host) * int(binarySize(z)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(p) })
	if err := CopyToDevice(d, p, host); err != nil {
		t.Fatal(err)
	}
	return p
}

func binarySize(v any) int { return binary.Size(v) }

func download[T Plain](t testing.TB, d *Device, p DevicePtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := CopyFromDevice(d, out, p); err != nil {
		t.Fatal(err)
	}
	return out
}

func wait(t testing.TB, j *Job, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := j.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// cycles converts microseconds to SM clock cycles for the spin kernels.
func cycles(d *Device, us float64) int64 {
	khz := d.Info().ClockKHz
	if khz <= 0 {
		khz = 1_800_000
	}
	return int64(us * float64(khz) / 1e3)
}

func TestGPUDeviceInfo(t *testing.T) {
	d, _ := needGPU(t)
	i := d.Info()
	t.Logf("%v", i)
	t.Logf("cc %d.%d, %d threads/SM, %d KiB shared opt-in, L2 %d MiB, mem clock %d MHz x %d bits, SM clock %d MHz",
		i.Major, i.Minor, i.MaxThreadsPerSM, i.MaxSharedOptin>>10, i.L2Bytes>>20, i.MemClockKHz/1000, i.BusWidthBits, i.ClockKHz/1000)
	if i.SMs <= 0 || i.TotalMem == 0 || !regexp.MustCompile(`^sm_\d+$`).MatchString(i.Arch()) || i.Name == "" {
		t.Errorf("implausible info %+v", i)
	}
	if i.PeakBandwidth() <= 0 {
		t.Logf("warning: driver reports no memory clock; peak bandwidth unknown")
	}
}

func TestGPUVAdd(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "vadd__slate<float>", vaddLayout)
	t.Logf("vadd: %+v, param info checked: %v", k.Attrs(), k.ParamInfoChecked)
	const n = 1<<20 + 123
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i)*0.5, float32(n-i)
	}
	pa, pb := alloc(t, d, a), alloc(t, d, b)
	pc := alloc(t, d, make([]float32, n))
	sms := d.Info().SMs
	grid := D1((n + 255) / 256)
	for _, c := range []struct {
		iters int
		r     SMRange
	}{
		{0, d.FullRange()},
		{1, d.FullRange()},
		{7, SMRange{sms / 2, sms - 1}},
		{0, SMRange{0, 0}},
		{32, SMRange{sms - 1, sms - 1}},
	} {
		if err := d.Memset32(pc, math.Float32bits(-1), n); err != nil { // poison
			t.Fatal(err)
		}
		var opts []LaunchOption
		if c.iters > 0 {
			opts = append(opts, WithIters(c.iters))
		}
		t0 := time.Now()
		j, err := d.Launch(k, grid, D1(256), 0, []any{pa, pb, pc, int32(n)}, c.r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		wait(t, j, 30*time.Second)
		host := time.Since(t0)
		got := download[float32](t, d, pc, n)
		for i := range got {
			if got[i] != a[i]+b[i] {
				t.Fatalf("iters %d range %v: c[%d] = %v, want %v", c.iters, c.r, i, got[i], a[i]+b[i])
			}
		}
		done, total, err := j.Progress(context.Background())
		if err != nil || done != total || total != grid.Count() {
			t.Errorf("progress %d/%d err %v", done, total, err)
		}
		st := j.Stats()
		t.Logf("iters %2d range %-9v: workers %d, GPU %v, host %v", j.Iters(), c.r, j.Workers(), st.GPUTime, host)
	}
}

func TestGPUSMRange(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	sms := d.Info().SMs
	grid := Dim3{37, 29, 3} // 3-D: checks the logical-id mapping too
	n := int(grid.Count())
	for _, r := range []SMRange{{sms / 4, sms/4 + sms/8}, {sms - 1, sms - 1}, {0, 1}, d.FullRange()} {
		counts := alloc(t, d, make([]uint32, n))
		smids := alloc(t, d, slices.Repeat([]uint32{math.MaxUint32}, n))
		j, err := d.Launch(k, grid, D1(64), 0, []any{counts, smids, int64(0)}, r)
		if err != nil {
			t.Fatal(err)
		}
		wait(t, j, 30*time.Second)
		cs, ss := download[uint32](t, d, counts, n), download[uint32](t, d, smids, n)
		used := map[uint32]int{}
		for i := range cs {
			if cs[i] != 1 {
				t.Fatalf("range %v: logical block %d ran %d times", r, i, cs[i])
			}
			if !onRange(d, r, ss[i]) {
				t.Fatalf("range %v: logical block %d ran on SM %d", r, i, ss[i])
			}
			used[ss[i]]++
		}
		t.Logf("range %v: %d logical blocks on %d distinct SMs (workers %d, iters %d)", r, n, len(used), j.Workers(), j.Iters())
	}
}

func TestGPUParamLayout(t *testing.T) {
	d, m := needGPU(t)
	// Affine is a user struct: its size comes from the driver.
	l := LayoutOf("char", "Affine", "float*", "int")
	if !driverHasParamInfo() {
		t.Skip("driver lacks cuFuncGetParamInfo (CUDA < 12.4): a user struct parameter cannot be sized")
	}
	k := kernel(t, m, "affine__slate", l)
	if !k.ParamInfoChecked {
		t.Fatal("layout not checked against the driver")
	}
	const n = 4096
	out := alloc(t, d, make([]float32, n))
	var aff [24]byte
	binary.LittleEndian.PutUint32(aff[0:], math.Float32bits(0.5))
	binary.LittleEndian.PutUint64(aff[8:], math.Float64bits(1.25))
	binary.LittleEndian.PutUint32(aff[16:], 3)
	j, err := d.Launch(k, D1(n/128), D1(128), 0, []any{int8(2), aff, out, int32(n)}, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	wait(t, j, 30*time.Second)
	got := download[float32](t, d, out, n)
	for i := range got {
		want := float32(float64(float32(0.5)*float32(i)) + 1.25 + 3 + 2)
		if got[i] != want {
			t.Fatalf("out[%d] = %v, want %v", i, got[i], want)
		}
	}
	// Layouts that disagree with the kernel are refused.
	for _, bad := range []ParamLayout{
		LayoutOf("int", "Affine", "float*", "int"),         // char is 1 byte
		LayoutOf("char", "Affine", "float*"),               // too few
		LayoutOf("char", "Affine", "float*", "int", "int"), // too many
		LayoutOf("char", "double", "float*", "int"),        // Affine is 24 bytes
	} {
		if _, err := m.Kernel("affine__slate", bad); err == nil {
			t.Errorf("layout %v accepted", bad)
		} else {
			t.Logf("refused: %v", err)
		}
	}
}

func TestGPUCoRun(t *testing.T) {
	d, m := needGPU(t)
	vadd := kernel(t, m, "vadd__slate<float>", vaddLayout)
	count := kernel(t, m, "count__slate", countLayout)
	sms := d.Info().SMs
	halves := []SMRange{{0, sms/2 - 1}, {sms / 2, sms - 1}}
	// Per goroutine: a long counting job (so the two overlap) and a vadd.
	const nc, n = 20000, 1 << 22
	type bufs struct {
		counts, smids, pa, pb, pc DevicePtr
		a, b                      []float32
	}
	in := make([]bufs, len(halves))
	for g := range in {
		in[g].a, in[g].b = make([]float32, n), make([]float32, n)
		for i := range in[g].a {
			in[g].a[i], in[g].b[i] = float32(i%1000+g), float32(3*i%777)
		}
		in[g].counts, in[g].smids = alloc(t, d, make([]uint32, nc)), alloc(t, d, make([]uint32, nc))
		in[g].pa, in[g].pb, in[g].pc = alloc(t, d, in[g].a), alloc(t, d, in[g].b), alloc(t, d, make([]float32, n))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(halves))
	for g, r := range halves {
		wg.Add(1)
		go func(g int, r SMRange, b bufs) {
			defer wg.Done()
			err := func() error {
				cj, err := d.Launch(count, D1(nc), D1(64), 0, []any{b.counts, b.smids, cycles(d, 20)}, r, WithName(fmt.Sprintf("count%d", g)))
				if err != nil {
					return err
				}
				vj, err := d.Launch(vadd, D1(n/256), D1(256), 0, []any{b.pa, b.pb, b.pc, int32(n)}, r, WithName(fmt.Sprintf("vadd%d", g)))
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				if err := vj.Wait(ctx); err != nil {
					return err
				}
				if err := cj.Wait(ctx); err != nil {
					return err
				}
				got := make([]float32, n)
				if err := CopyFromDevice(d, got, b.pc); err != nil {
					return err
				}
				for i := range got {
					if got[i] != b.a[i]+b.b[i] {
						return fmt.Errorf("goroutine %d: c[%d] = %v, want %v", g, i, got[i], b.a[i]+b.b[i])
					}
				}
				cs, ss := make([]uint32, nc), make([]uint32, nc)
				if err := CopyFromDevice(d, cs, b.counts); err != nil {
					return err
				}
				if err := CopyFromDevice(d, ss, b.smids); err != nil {
					return err
				}
				for i := range cs {
					if cs[i] != 1 || !onRange(d, r, ss[i]) {
						return fmt.Errorf("goroutine %d: block %d count %d on SM %d, range %v", g, i, cs[i], ss[i], r)
					}
				}
				t.Logf("goroutine %d on %v: count job GPU %v, vadd GPU %v", g, r, cj.Stats().GPUTime, vj.Stats().GPUTime)
				return nil
			}()
			if err != nil {
				errs <- err
			}
		}(g, r, in[g])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGPUResizeRandom resizes one running job 100 times to random ranges;
// every logical block must run exactly once.
func TestGPUResizeRandom(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	sms := d.Info().SMs
	// ~33.5M logical blocks of ~10 us: about 80 ms on all SMs, several times
	// the resize loop's length on random (on average half-size) ranges.
	grid := Dim3{4096, 8192, 1}
	n := int(grid.Count())
	counts := alloc(t, d, make([]uint32, n))
	smids := alloc(t, d, make([]uint32, n))
	j, err := d.Launch(k, grid, D1(64), 0, []any{counts, smids, cycles(d, 10)}, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(42))
	var stats []ResizeStats
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for i := 0; i < 100; i++ {
		lo := r.Intn(sms)
		to := SMRange{lo, lo + r.Intn(sms-lo)}
		st, err := j.Resize(ctx, to)
		if errors.Is(err, ErrJobFinished) {
			t.Fatalf("job finished after %d resizes: make it longer", i)
		}
		if err != nil {
			t.Fatal(err)
		}
		stats = append(stats, st)
		time.Sleep(time.Duration(r.Intn(500)) * time.Microsecond)
	}
	done, total, err := j.Progress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after 100 resizes: %d/%d logical blocks done", done, total)
	if st, err := j.Resize(ctx, d.FullRange()); err == nil {
		stats = append(stats, st)
	} else if !errors.Is(err, ErrJobFinished) {
		t.Fatal(err)
	}
	wait(t, j, 120*time.Second)
	cs := download[uint32](t, d, counts, n)
	for i, c := range cs {
		if c != 1 {
			t.Fatalf("logical block %d ran %d times", i, c)
		}
	}
	// A resize relaunches once; a grow launches once per added piece.
	want, grows := 1+j.Stats().Respawns, 0
	for _, st := range stats {
		if st.Grow {
			grows++
			want += len(growPieces(st.From, st.To))
		} else {
			want++
		}
	}
	if js := j.Stats(); js.Launches != want {
		t.Errorf("launches %d, want %d (resizes %d of which %d grew, respawns %d)", js.Launches, want, len(stats), grows, js.Respawns)
	}
	t.Logf("%d of %d resizes grew without a drain", grows, len(stats))
	logResizeStats(t, stats)
	js := j.Stats()
	t.Logf("job GPU time %v over %d launches, iters %d, workers %d", js.GPUTime, js.Launches, j.Iters(), j.Workers())
}

// TestGPUGrowWithoutDrain grows jobs from the low half of the SMs to all
// of them: no drain, one more launch on the high half beside the running
// one. The first job then runs to its end: every logical block once, some
// on the high half (only the added launch could run them there). The
// second is shrunk after the grow, so both launches drain, and must still
// run every block once.
func TestGPUGrowWithoutDrain(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	sms := d.Info().SMs
	if sms < 4 {
		t.Skip("needs 4 SMs")
	}
	grid := Dim3{4096, 1024, 1} // ~4.2M blocks of ~10 us: ~10 ms on all SMs
	n := int(grid.Count())
	low := SMRange{0, sms/2 - 1}
	for _, shrink := range []bool{false, true} {
		counts := alloc(t, d, make([]uint32, n))
		smids := alloc(t, d, make([]uint32, n))
		j, err := d.Launch(k, grid, D1(64), 0, []any{counts, smids, cycles(d, 10)}, low)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		time.Sleep(time.Millisecond)
		g, err := j.Resize(ctx, d.FullRange())
		if err != nil {
			t.Fatal(err)
		}
		if !g.Grow || g.Drain != 0 || j.Range() != d.FullRange() {
			t.Fatalf("low half to all SMs: %+v, range %v; want a grow without drain", g, j.Range())
		}
		launches := 2
		if shrink {
			time.Sleep(time.Millisecond)
			s, err := j.Resize(ctx, SMRange{0, sms/4 - 1})
			if err != nil {
				t.Fatal(err)
			}
			if s.Grow {
				t.Fatalf("all SMs to a quarter grew: %+v", s)
			}
			t.Logf("shrink after grow drained in %v", s.Drain)
			launches++
		}
		wait(t, j, 60*time.Second)
		cancel()
		cs := download[uint32](t, d, counts, n)
		ids := download[uint32](t, d, smids, n)
		high := 0
		for i, c := range cs {
			if c != 1 {
				t.Fatalf("shrink=%v: logical block %d ran %d times", shrink, i, c)
			}
			if int(ids[i]) >= sms/2 {
				high++
			}
		}
		if js := j.Stats(); js.Launches != launches+js.Respawns {
			t.Errorf("shrink=%v: launches %d, want %d + %d respawns", shrink, js.Launches, launches, js.Respawns)
		}
		t.Logf("shrink=%v: grow queued in %v; %d of %d blocks ran on the added SMs", shrink, g.Host, high, n)
		if high == 0 {
			t.Errorf("shrink=%v: no logical block ran on the SMs the grow added", shrink)
		}
	}
}

// TestGPUClock checks the GPU stamps against the events and each other: a
// job's stamped span agrees with its event time, two jobs on halves of the
// SMs overlap, and a job started behind another (WithAfter) starts after it
// ended while a third job is resized. (Behind a job that is itself resized,
// the start follows the old launch's drain, as WithAfter documents.)
func TestGPUClock(t *testing.T) {
	d, m := needGPU(t)
	if err := d.EnableClock(); err != nil {
		t.Skip(err)
	}
	k := kernel(t, m, "spin__slate", spinLayout)
	sms := d.Info().SMs
	launch := func(r SMRange, opts ...LaunchOption) *Job {
		// 200 µs blocks: a and b run for milliseconds, well beyond the host
		// time between their launches (b's first launch on a partial range
		// measured 320 µs after a's start), so that they must overlap.
		j, err := d.Launch(k, D1(uint32(sms*64)), D1(64), 0, []any{cycles(d, 200)}, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	a := launch(SMRange{0, sms/2 - 1})
	b := launch(SMRange{sms / 2, sms - 1})
	c := launch(d.FullRange(), WithAfter(b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.Resize(ctx, SMRange{0, sms/4 - 1}); err != nil && !errors.Is(err, ErrJobFinished) {
		t.Fatal(err)
	}
	for _, j := range []*Job{a, b, c} {
		wait(t, j, 30*time.Second)
	}
	sa, sb, sc := a.Stats(), b.Stats(), c.Stats()
	for i, s := range []JobStats{sa, sb, sc} {
		if s.Start.IsZero() || !s.End.After(s.Start) {
			t.Fatalf("job %d: stamps %v .. %v", i, s.Start, s.End)
		}
		span := s.End.Sub(s.Start)
		if diff := span - s.GPUTime; diff > 100*time.Microsecond+s.GPUTime/5 || -diff > 100*time.Microsecond+s.GPUTime/5 {
			t.Errorf("job %d: stamped span %v, events %v", i, span, s.GPUTime)
		}
	}
	if !(sa.Start.Before(sb.End) && sb.Start.Before(sa.End)) {
		t.Errorf("jobs on the two halves do not overlap: %v..%v and %v..%v", sa.Start, sa.End, sb.Start, sb.End)
	}
	if sc.Start.Before(sb.End) {
		t.Errorf("the job started behind b began %v before b ended", sb.End.Sub(sc.Start))
	}
	t.Logf("a %v..%v, b %v..%v, c starts %v after b ends",
		0, sa.End.Sub(sa.Start), sb.Start.Sub(sa.Start), sb.End.Sub(sa.Start), sc.Start.Sub(sb.End))
}

func logResizeStats(t testing.TB, s []ResizeStats) {
	t.Helper()
	q := func(f func(ResizeStats) time.Duration) string {
		v := make([]time.Duration, len(s))
		for i := range s {
			v[i] = f(s[i])
		}
		slices.Sort(v)
		return fmt.Sprintf("median %v p90 %v max %v", v[len(v)/2], v[len(v)*9/10], v[len(v)-1])
	}
	t.Logf("retreat-to-drained: %s", q(func(r ResizeStats) time.Duration { return r.Drain }))
	t.Logf("drained-to-relaunch gap: %s", q(func(r ResizeStats) time.Duration { return r.Gap }))
	t.Logf("host resize call: %s", q(func(r ResizeStats) time.Duration { return r.Host }))
}

func TestGPUCancelAndProgress(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	n := 200000
	counts := alloc(t, d, make([]uint32, n))
	smids := alloc(t, d, make([]uint32, n))
	// About 250 ms on 8 SMs: the ten progress reads below land mid-job.
	j, err := d.Launch(k, D1(uint32(n)), D1(64), 0, []any{counts, smids, cycles(d, 320)}, SMRange{0, 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var last uint64
	for i := 0; i < 10; i++ {
		time.Sleep(5 * time.Millisecond)
		t0 := time.Now()
		done, total, err := j.Progress(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if done < last || done >= total {
			t.Fatalf("progress %d after %d (total %d)", done, last, total)
		}
		if i == 0 {
			t.Logf("progress read took %v", time.Since(t0))
		}
		last = done
	}
	j.Cancel()
	err = j.Wait(ctx)
	if !errors.Is(err, ErrCanceled) {
		t.Fatalf("Wait after Cancel: %v", err)
	}
	done, _, _ := j.Progress(ctx)
	if done < last || done == 0 {
		t.Fatalf("final progress %d (last seen %d)", done, last)
	}
	cs := download[uint32](t, d, counts, n)
	for i, c := range cs {
		if want := uint32(0); uint64(i) < done {
			if c != 1 {
				t.Fatalf("block %d (< done %d) ran %d times", i, done, c)
			}
		} else if c != want {
			t.Fatalf("block %d (>= done %d) ran %d times", i, done, c)
		}
	}
	if _, err := j.Resize(ctx, d.FullRange()); !errors.Is(err, ErrJobFinished) {
		t.Errorf("Resize after end: %v", err)
	}
	t.Logf("canceled after %d of %d blocks: %v", done, n, err)
}

func TestGPUScheduler(t *testing.T) {
	d, m := needGPU(t)
	count := kernel(t, m, "count__slate", countLayout)
	vadd := kernel(t, m, "vadd__slate<float>", vaddLayout)
	var mu sync.Mutex
	var events []Event
	s, err := NewScheduler(DeviceExecutor{d}, SchedulerOptions{OnEvent: func(e Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	type check func() error
	const nc, nv = 30000, 1 << 22
	mkCount := func(name string, p Profile, us float64) (*Task, check) {
		counts := alloc(t, d, make([]uint32, nc))
		smids := alloc(t, d, make([]uint32, nc))
		return &Task{Name: name, Profile: p, Kernel: count, Grid: D1(nc), Block: D1(64),
				Args: []any{counts, smids, cycles(d, us)}}, func() error {
				cs := make([]uint32, nc)
				if err := CopyFromDevice(d, cs, counts); err != nil {
					return err
				}
				for i, c := range cs {
					if c != 1 {
						return fmt.Errorf("%s: block %d ran %d times", name, i, c)
					}
				}
				return nil
			}
	}
	a, b := make([]float32, nv), make([]float32, nv)
	for i := range a {
		a[i], b[i] = float32(i%4096), 1
	}
	pa, pb, pc := alloc(t, d, a), alloc(t, d, b), alloc(t, d, make([]float32, nv))
	tasks := []*Task{}
	checks := []check{}
	for i, p := range []Profile{profiles[ClassLC], profiles[ClassLC], profiles[ClassHC]} {
		tk, c := mkCount(fmt.Sprintf("count%d", i), p, 20)
		tasks, checks = append(tasks, tk), append(checks, c)
	}
	tasks = append(tasks, &Task{Name: "vadd", Profile: profiles[ClassHM], Kernel: vadd, Grid: D1(nv / 256), Block: D1(256),
		Args: []any{pa, pb, pc, int32(nv)}})
	checks = append(checks, func() error {
		got := make([]float32, nv)
		if err := CopyFromDevice(d, got, pc); err != nil {
			return err
		}
		for i := range got {
			if got[i] != a[i]+b[i] {
				return fmt.Errorf("vadd: c[%d] = %v", i, got[i])
			}
		}
		return nil
	})
	handles := make([]*Handle, len(tasks))
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h, err := s.Submit(tasks[i])
			if err != nil {
				t.Error(err)
				return
			}
			handles[i] = h
		}(i)
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for _, h := range handles {
		if h == nil {
			t.FailNow()
		}
		if err := h.Wait(ctx); err != nil {
			t.Fatalf("%s: %v", h.Name(), err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if err := c(); err != nil {
			t.Error(err)
		}
	}
	resized := 0
	for _, e := range events {
		t.Logf("%-13v %-7s %v %v", e.Kind, e.Task, e.Range, e.Err)
		if e.Kind == EventResized {
			resized++
		}
	}
	for _, h := range handles {
		if j := h.Job(); j != nil {
			st := j.Stats()
			t.Logf("%s (%v): ranges %v, launches %d, GPU %v", h.Name(), h.Class(), h.Ranges(), st.Launches, st.GPUTime)
		}
	}
	if resized == 0 {
		t.Error("no task was ever resized: no co-running happened")
	}
}

// TestGPUCacheHitLoad: a kernel whose CUBIN is cached loads in <= 1 ms
// (compile-cache lookup + module load + function lookup).
func TestGPUCacheHitLoad(t *testing.T) {
	d, _ := needGPU(t)
	c := &Compiler{CacheDir: t.TempDir()}
	req := CompileRequest{Name: "worker.cu", Source: readWorker(t), Arch: d.Info().Arch(), NameExpressions: workerExprs}
	if _, err := c.Compile(req); err != nil { // fill the cache
		t.Fatal(err)
	}
	var times []time.Duration
	for i := 0; i < 15; i++ {
		t0 := time.Now()
		res, err := c.Compile(req)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := d.LoadModule(res)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mod.Kernel("vadd__slate<float>", vaddLayout); err != nil {
			t.Fatal(err)
		}
		el := time.Since(t0)
		if !res.CacheHit {
			t.Fatal("not a cache hit")
		}
		times = append(times, el)
		if err := mod.Unload(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(times)
	med := times[len(times)/2]
	t.Logf("cache-hit kernel load: median %v, min %v, max %v", med, times[0], times[len(times)-1])
	if med > time.Millisecond {
		t.Errorf("cache-hit kernel load median %v > 1 ms", med)
	}
}

// TestGPUBadKernel runs a kernel that writes out of bounds in a child
// process (the fault destroys the CUDA context for the whole process): its
// job must fail with CUDA_ERROR_ILLEGAL_ADDRESS, other jobs must fail too
// rather than hang, and the child must exit.
func TestGPUBadKernel(t *testing.T) {
	if os.Getenv("SLATEC_TEST_BAD_CHILD") == "1" {
		badKernelChild(t)
		return
	}
	needGPU(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGPUBadKernel$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "SLATEC_TEST_BAD_CHILD=1")
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("child ran %v:\n%s", time.Since(t0), out)
	if ctx.Err() != nil {
		t.Fatal("child process hung")
	}
	if err != nil {
		t.Fatalf("child failed: %v", err)
	}
	if !strings.Contains(string(out), "CHILD-OK") {
		t.Fatal("child did not finish its checks")
	}
}

func badKernelChild(t *testing.T) {
	d, m := needGPU(t)
	oob := kernel(t, m, "oob__slate", oobLayout)
	spin := kernel(t, m, "spin__slate", spinLayout)
	x, err := d.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	sms := d.Info().SMs
	// A bystander that would run for ~10 s, then the faulting kernel.
	good, err := d.Launch(spin, D1(1<<20), D1(64), 0, []any{cycles(d, 10)}, SMRange{0, sms/2 - 1}, WithName("bystander"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := d.Launch(oob, D1(64), D1(256), 0, []any{x, int64(1) << 36}, SMRange{sms / 2, sms - 1}, WithName("oob"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	err = bad.Wait(ctx)
	fmt.Printf("oob job (%v): %v\n", time.Since(t0), err)
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS") || ctx.Err() != nil {
		t.Fatalf("oob job: want CUDA_ERROR_ILLEGAL_ADDRESS, got %v", err)
	}
	err = good.Wait(ctx)
	fmt.Printf("bystander job: %v\n", err)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("bystander: want an error (context lost), got %v", err)
	}
	if _, err := d.Launch(spin, D1(1), D1(64), 0, []any{int64(0)}, d.FullRange()); err == nil ||
		!strings.Contains(err.Error(), "unusable") {
		t.Fatalf("launch after the fault: %v", err)
	} else {
		fmt.Printf("launch after the fault: %v\n", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case err := <-closed:
		fmt.Printf("Close: %v\n", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Close hung after a fault")
	}
	fmt.Println("CHILD-OK")
}

// BenchmarkResize measures retreat-to-drained latency and the relaunch gap
// on a job that never ends by itself, for two task lengths.
func BenchmarkResize(b *testing.B) {
	d, m := needGPU(b)
	k := kernel(b, m, "spin__slate", spinLayout)
	sms := d.Info().SMs
	for _, c := range []struct {
		name  string
		us    float64
		iters int
	}{{"task=4x1us", 1, 4}, {"task=4x10us", 10, 4}, {"task=32x10us", 10, 32}} {
		b.Run(c.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			// Calibrate the task length: every worker runs 8 tasks back to
			// back, so the job's GPU time over 8 is one task. (The spin is
			// set in nominal clock cycles; the SM clock decides the time.)
			cal, err := d.Launch(k, D1(1), D1(64), 0, []any{int64(0)}, d.FullRange(), WithIters(c.iters))
			if err != nil {
				b.Fatal(err)
			}
			if err := cal.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			occWorkers := 0
			if occ, err := k.Occupancy(64, 0); err == nil {
				occWorkers = occ * sms
			}
			cal, err = d.Launch(k, D1(uint32(occWorkers*c.iters*8)), D1(64), 0, []any{cycles(d, c.us)}, d.FullRange(), WithIters(c.iters))
			if err != nil {
				b.Fatal(err)
			}
			if err := cal.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			taskUS := float64(cal.Stats().GPUTime) / 8 / 1e3
			j, err := d.Launch(k, D1(1<<31-1), D1(64), 0, []any{cycles(d, c.us)}, d.FullRange(), WithIters(c.iters))
			if err != nil {
				b.Fatal(err)
			}
			ranges := []SMRange{{0, sms/2 - 1}, d.FullRange(), {sms / 2, sms - 1}}
			stats := make([]ResizeStats, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st, err := j.Resize(ctx, ranges[i%len(ranges)])
				if err != nil {
					b.Fatal(err)
				}
				stats = append(stats, st)
			}
			b.StopTimer()
			j.Cancel()
			if err := j.Wait(ctx); !errors.Is(err, ErrCanceled) {
				b.Fatal(err)
			}
			med := func(f func(ResizeStats) time.Duration) float64 {
				v := make([]time.Duration, len(stats))
				for i := range stats {
					v[i] = f(stats[i])
				}
				slices.Sort(v)
				return float64(v[len(v)/2]) / 1e3
			}
			// Half to all SMs grows without a drain: drains are the others'.
			var drains, grows []ResizeStats
			for _, st := range stats {
				if st.Grow {
					grows = append(grows, st)
				} else {
					drains = append(drains, st)
				}
			}
			stats = drains
			b.ReportMetric(med(func(r ResizeStats) time.Duration { return r.Drain }), "drain-us")
			b.ReportMetric(med(func(r ResizeStats) time.Duration { return r.Gap }), "gap-us")
			b.ReportMetric(med(func(r ResizeStats) time.Duration { return r.Host }), "host-us")
			if stats = grows; len(grows) > 0 {
				b.ReportMetric(med(func(r ResizeStats) time.Duration { return r.Host }), "grow-host-us")
			}
			b.ReportMetric(taskUS, "task-us")
		})
	}
}

// BenchmarkLaunchWait measures a small job's launch-to-Wait round trip.
func BenchmarkLaunchWait(b *testing.B) {
	d, m := needGPU(b)
	k := kernel(b, m, "spin__slate", spinLayout)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		j, err := d.Launch(k, D1(uint32(d.Info().SMs)), D1(64), 0, []any{int64(0)}, d.FullRange())
		if err != nil {
			b.Fatal(err)
		}
		if err := j.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHitLoad measures compile-cache hit + module load + lookup.
func BenchmarkCacheHitLoad(b *testing.B) {
	d, _ := needGPU(b)
	c := &Compiler{CacheDir: b.TempDir()}
	req := CompileRequest{Name: "worker.cu", Source: readWorker(b), Arch: d.Info().Arch(), NameExpressions: workerExprs}
	if _, err := c.Compile(req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.Compile(req)
		if err != nil {
			b.Fatal(err)
		}
		mod, err := d.LoadModule(res)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mod.Kernel("vadd__slate<float>", vaddLayout); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		mod.Unload()
		b.StartTimer()
	}
}

// TestGPUFlushL2 checks that FlushL2 evicts the L2: one thread follows a
// chain of dependent loads through a table a quarter of the L2's size; the
// walk repeated with the table still cached waits on the L2's latency, the
// walk right after a flush on DRAM's, about twice as long. (A bandwidth
// read of the table could not tell them apart on the H200: 20 MB took
// 22-30 µs warm and cold alike.)
func TestGPUFlushL2(t *testing.T) {
	d, _ := needGPU(t)
	if !GreenSupported() {
		t.Skip(ErrNoGreen)
	}
	l2 := d.Info().L2Bytes
	if l2 < 4<<20 {
		t.Skipf("L2 of %d bytes", l2)
	}
	const src = `extern "C" __global__ void walk(const unsigned int* __restrict__ next, int steps, unsigned int* out) {
    unsigned int i = 0;
    for (int s = 0; s < steps; ++s)
        i = next[i];
    *out = i;
}`
	k := nativeKernel(t, d, src, "walk", LayoutOf("const unsigned int*", "int", "unsigned int*"))
	// A power of two of 4-byte entries, at most a quarter of the L2; a
	// full-period LCG (a = 1 mod 4, c odd) so that each step lands on
	// another line, with no pattern a prefetcher could follow.
	n := 1
	for n*2*4 <= l2/4 {
		n *= 2
	}
	next := make([]uint32, n)
	for i := range next {
		next[i] = uint32((uint64(i)*1664525 + 1013904223) & uint64(n-1))
	}
	const steps = 20000 // ~20000 lines, 2.5 MB: well inside the L2
	tab := alloc(t, d, next)
	out := alloc(t, d, make([]uint32, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(flush bool) time.Duration {
		if flush {
			if err := d.FlushL2(); err != nil {
				t.Fatal(err)
			}
		}
		nl, err := d.LaunchNative(k, D1(1), D1(1), 0, []any{tab, int32(steps), out})
		if err != nil {
			t.Fatal(err)
		}
		if err := nl.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return nl.GPUTime()
	}
	med := func(flush bool) time.Duration {
		var v []time.Duration
		for range 7 {
			v = append(v, run(flush))
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	run(false)
	warm, cold := med(false), med(true)
	t.Logf("a %d-step walk through %d bytes (L2 %d): warm %v, after FlushL2 %v (%.2fx)", steps, 4*n, l2, warm, cold, float64(cold)/float64(warm))
	if float64(cold) < 1.2*float64(warm) {
		t.Errorf("a walk after FlushL2 (%v) is not clearly slower than a warm one (%v): the L2 was not evicted", cold, warm)
	}
}

// TestGPUNativeAfter checks WithAfter across kinds: a native kernel behind
// a worker job, a worker job behind the native kernel, and a native kernel
// behind another, each starting (GPU stamps) after its predecessor ended.
func TestGPUNativeAfter(t *testing.T) {
	d, m := needGPU(t)
	if !GreenSupported() {
		t.Skip(ErrNoGreen)
	}
	if err := d.EnableClock(); err != nil {
		t.Skip(err)
	}
	const src = `extern "C" __global__ void nspin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}`
	nk := nativeKernel(t, d, src, "nspin", LayoutOf("long long"))
	k := kernel(t, m, "spin__slate", spinLayout)
	sms := d.Info().SMs
	a, err := d.Launch(k, D1(uint32(sms*16)), D1(64), 0, []any{cycles(d, 30)}, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	n1, err := d.LaunchNative(nk, D1(uint32(sms)), D1(64), 0, []any{cycles(d, 40)}, WithAfter(a))
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Launch(k, D1(uint32(sms*16)), D1(64), 0, []any{cycles(d, 30)}, d.FullRange(), WithAfter(n1))
	if err != nil {
		t.Fatal(err)
	}
	n2, err := d.LaunchNative(nk, D1(uint32(sms)), D1(64), 0, []any{cycles(d, 40)}, WithAfter(b))
	if err != nil {
		t.Fatal(err)
	}
	n3, err := d.LaunchNative(nk, D1(1), D1(32), 0, []any{cycles(d, 20)}, WithAfter(n2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range []*NativeLaunch{n1, n2, n3} {
		if err := n.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, a, 30*time.Second)
	wait(t, b, 30*time.Second)
	type span struct {
		name       string
		start, end time.Time
	}
	sa, sb := a.Stats(), b.Stats()
	s1, e1 := n1.Span()
	s2, e2 := n2.Span()
	s3, e3 := n3.Span()
	chain := []span{{"job a", sa.Start, sa.End}, {"native 1", s1, e1}, {"job b", sb.Start, sb.End}, {"native 2", s2, e2}, {"native 3", s3, e3}}
	for i, s := range chain {
		if s.start.IsZero() || s.end.Before(s.start) {
			t.Fatalf("%s: stamps %v .. %v", s.name, s.start, s.end)
		}
		if i > 0 && s.start.Before(chain[i-1].end) {
			t.Errorf("%s started %v before %s (its predecessor) ended", s.name, chain[i-1].end.Sub(s.start), chain[i-1].name)
		}
		if i > 0 {
			t.Logf("%s starts %v after %s ends", s.name, s.start.Sub(chain[i-1].end), chain[i-1].name)
		}
	}
}

// TestGPUSpreadSmallGrid checks that a grid smaller than what a partial
// range holds is spread over the range's SMs: 32 logical blocks of 64
// threads (64 fit an SM) on 32 SMs run one per SM, all within the range.
func TestGPUSpreadSmallGrid(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "where__slate", LayoutOf("unsigned int*", "long long"))
	const n = 32
	if d.Info().SMs < 2*n {
		t.Skipf("%d SMs", d.Info().SMs)
	}
	out := alloc(t, d, make([]uint32, n))
	r := SMRange{Low: 8, High: 8 + n - 1}
	for rep := range 3 {
		j, err := d.Launch(k, D1(n), D1(64), 0, []any{out, cycles(d, 50)}, r, WithIters(1))
		if err != nil {
			t.Fatal(err)
		}
		wait(t, j, 30*time.Second)
		sms := download[uint32](t, d, out, n)
		per := map[uint32]int{}
		for i, s := range sms {
			if !onRange(d, r, s) {
				t.Fatalf("logical block %d ran on SM %d, outside %v", i, s, r)
			}
			per[s]++
		}
		t.Logf("rep %d: %d blocks on %d distinct SMs of %d", rep, n, len(per), n)
		if len(per) != n {
			t.Errorf("rep %d: %d blocks ran on %d SMs of the %d in range: %v", rep, n, len(per), n, per)
		}
	}
}

// nativeKernel compiles src with NVRTC and loads its extern "C" kernel name
// as a native kernel (a context-independent library, unloaded at the end
// of the test).
func nativeKernel(t *testing.T, d *Device, src, name string, l ParamLayout) *NativeKernel {
	t.Helper()
	c, err := (&Compiler{CacheDir: testCacheDir}).Compile(CompileRequest{Name: name + ".cu", Source: src, Arch: d.Info().Arch()})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := d.LoadLibrary(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Unload() })
	k, err := lib.Kernel(name, l)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A job that ran on one range from start to end teaches its kernel how long
// its logical blocks take, and the next job of that shape sizes its tasks
// from it (TaskIters); SetBlockTime overrides it.
func TestGPULearnedTaskSize(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "vadd__slate<float>", vaddLayout)
	const n = 1 << 22
	pa := alloc(t, d, make([]float32, n))
	pb := alloc(t, d, make([]float32, n))
	pc := alloc(t, d, make([]float32, n))
	grid, block := D1(n/256), D1(256)
	args := []any{pa, pb, pc, int32(n)}
	occ, err := k.Occupancy(256, 0)
	if err != nil || occ < 1 {
		t.Fatalf("occupancy %d: %v", occ, err)
	}
	all := occ * d.Info().SMs
	total := grid.Count()
	if got := k.BlockTime(total, 256, 0); got != 0 {
		t.Fatalf("block time %v before any job", got)
	}
	j, err := d.Launch(k, grid, block, 0, args, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	wait(t, j, 30*time.Second)
	if want := AutoIters(int64(total), all); j.Iters() != want {
		t.Errorf("first job: iters %d, want AutoIters' %d", j.Iters(), want)
	}
	ns := k.BlockTime(total, 256, 0)
	if ns <= 0 {
		t.Fatalf("no block time learned from a job of %v on all SMs", j.Stats().GPUTime)
	}
	if k.BlockTime(total+1, 256, 0) != 0 {
		t.Errorf("a block time for another grid")
	}
	j2, err := d.Launch(k, grid, block, 0, args, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	wait(t, j2, 30*time.Second)
	if want := TaskIters(int64(total), all, ns); j2.Iters() != want {
		t.Errorf("second job: iters %d, want TaskIters' %d for %.0f ns blocks", j2.Iters(), want, ns)
	}
	t.Logf("vadd %d blocks on %d workers: %.0f ns a block; iters %d then %d", total, all, ns, j.Iters(), j2.Iters())
	k.SetBlockTime(total, 256, 0, 1e6) // 1 ms blocks: one a task
	j3, err := d.Launch(k, grid, block, 0, args, d.FullRange())
	if err != nil {
		t.Fatal(err)
	}
	wait(t, j3, 30*time.Second)
	if j3.Iters() != 1 {
		t.Errorf("after SetBlockTime(1 ms): iters %d, want 1", j3.Iters())
	}
}

// A two-wave launch on a partial range runs every logical block once, and
// mid-run its workers count themselves only on the range's SMs, never more
// on one than fit (RankedWorkers).
func TestGPUWavesAndRankedWorkers(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	n := 200000
	counts := alloc(t, d, make([]uint32, n))
	smids := alloc(t, d, make([]uint32, n))
	occ, err := k.Occupancy(64, 0)
	if err != nil || occ < 1 {
		t.Fatalf("occupancy %d: %v", occ, err)
	}
	r := SMRange{Low: 4, High: 11}
	j, err := d.Launch(k, D1(uint32(n)), D1(64), 0, []any{counts, smids, cycles(d, 320)}, r, WithWaves(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	time.Sleep(20 * time.Millisecond)
	ranks, err := j.RankedWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranks) != RankSMs {
		t.Fatalf("%d counts, want %d", len(ranks), RankSMs)
	}
	in := 0
	for sm, c := range ranks {
		inside := onRange(d, r, uint32(sm))
		if !inside && c != 0 {
			t.Errorf("SM %d outside %v counts %d workers", sm, r, c)
		}
		if inside {
			if int(c) > occ {
				t.Errorf("SM %d counts %d workers, more than the %d that fit", sm, c, occ)
			}
			in += int(c)
		}
	}
	if in == 0 {
		t.Errorf("no worker counted on %v mid-run", r)
	}
	var onSMs []uint32
	for _, sm := range d.SMsOf(r) {
		onSMs = append(onSMs, ranks[sm])
	}
	t.Logf("mid-run: %d workers on %v = SMs %v (%d fit an SM): %v", in, r, d.SMsOf(r), occ, onSMs)
	wait(t, j, 60*time.Second)
	cs := download[uint32](t, d, counts, n)
	for i, c := range cs {
		if c != 1 {
			t.Fatalf("block %d ran %d times", i, c)
		}
	}
	if _, err := d.Launch(k, D1(1), D1(64), 0, []any{counts, smids, cycles(d, 1)}, r, WithWaves(17)); err == nil {
		t.Errorf("17 waves accepted")
	}
}

// onRange says whether SM sm is in range r of the device's SM order.
func onRange(d *Device, r SMRange, sm uint32) bool {
	for _, s := range d.SMsOf(r) {
		if uint32(s) == sm {
			return true
		}
	}
	return false
}

// The SM order is a permutation of the device's SMs; on a device with
// clusters (sm_90+) it was found from them, GPC by GPC. A worker on a range
// runs only on the SMs of its places: the place table reached the control
// block (with GPC order the first 16 places are not SMs 0-15).
func TestGPUSMOrder(t *testing.T) {
	d, m := needGPU(t)
	order := d.SMOrder()
	if err := checkOrder(order, d.Info().SMs); err != nil {
		t.Fatal(err)
	}
	t.Logf("SM order: %s", d.SMOrderSource())
	t.Logf("places 0-39: SMs %v", d.SMsOf(SMRange{Low: 0, High: 39}))
	if d.Info().Major >= 9 && GreenSupported() && os.Getenv(EnvSMOrder) == "" {
		if !strings.HasPrefix(d.SMOrderSource(), "gpc:") {
			t.Errorf("a device with clusters kept %%smid order: %s", d.SMOrderSource())
		}
	}
	k := kernel(t, m, "where__slate", LayoutOf("unsigned int*", "long long"))
	const n = 2048
	out := alloc(t, d, make([]uint32, n))
	r := SMRange{Low: 0, High: 15}
	j, err := d.Launch(k, D1(n), D1(64), 0, []any{out, cycles(d, 20)}, r)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, j, 30*time.Second)
	want := map[int]bool{}
	for _, s := range d.SMsOf(r) {
		want[s] = true
	}
	used := map[uint32]int{}
	for i, s := range download[uint32](t, d, out, n) {
		if !want[int(s)] {
			t.Fatalf("logical block %d ran on SM %d, not one of places %v = SMs %v", i, s, r, d.SMsOf(r))
		}
		used[s]++
	}
	if len(used) < 8 {
		t.Errorf("%d blocks ran on only %d SMs of the range's 16", n, len(used))
	}
}

// Deferred grows (GrowAtEnd): the grown job takes its trigger's SMs when
// the trigger ends, adopted by a Resize or by its own end; a job that ends
// first abandons its grow, which later runs on an empty queue without
// touching its blocks or the control block's next owner; a trigger
// resized early starts the grow at its drain (correct, if early). Every
// logical block runs once in every case.
func TestGPUDeferredGrow(t *testing.T) {
	d, m := needGPU(t)
	k := kernel(t, m, "count__slate", countLayout)
	sms := d.Info().SMs
	if sms < 4 {
		t.Skip("needs 4 SMs")
	}
	low, high := SMRange{0, sms/2 - 1}, SMRange{sms / 2, sms - 1}
	onHigh := map[int]bool{}
	for _, s := range d.SMsOf(high) {
		onHigh[s] = true
	}
	type job struct {
		j      *Job
		counts DevicePtr
		smids  DevicePtr
		n      int
	}
	// ~420K blocks of 10 us a ms on all SMs (TestGPUGrowWithoutDrain).
	// Buffers first: uploading them takes longer than the short jobs run.
	prep := func(rows uint32) job {
		n := 4096 * int(rows)
		return job{counts: alloc(t, d, make([]uint32, n)), smids: alloc(t, d, make([]uint32, n)), n: n}
	}
	start := func(jb *job, r SMRange) {
		var err error
		jb.j, err = d.Launch(k, Dim3{4096, uint32(jb.n / 4096), 1}, D1(64), 0, []any{jb.counts, jb.smids, cycles(d, 10)}, r)
		require.NoError(t, err)
	}
	launch2 := func(rowsB uint32, rb SMRange, rowsA uint32, ra SMRange) (job, job) {
		b, a := prep(rowsB), prep(rowsA)
		start(&b, rb)
		start(&a, ra)
		return b, a
	}
	// check waits for jb and returns how many of its blocks ran on high.
	check := func(name string, jb job) int {
		t.Helper()
		wait(t, jb.j, 60*time.Second)
		cs := download[uint32](t, d, jb.counts, jb.n)
		ids := download[uint32](t, d, jb.smids, jb.n)
		on := 0
		for i, c := range cs {
			if c != 1 {
				t.Fatalf("%s: logical block %d ran %d times", name, i, c)
			}
			if onHigh[int(ids[i])] {
				on++
			}
		}
		return on
	}
	deferred := func(jb job) int {
		n := 0
		for _, r := range jb.j.Stats().Resizes {
			if r.Deferred {
				n++
			}
		}
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, adopt := range []string{"resize", "end"} {
		// The trigger (high half, ~3 ms) ends first; the grown job (low
		// half, ~12 ms alone) takes its SMs then.
		b, a := launch2(2000, low, 200, high)
		require.NoError(t, b.j.GrowAtEnd(a.j, d.FullRange()))
		require.NoError(t, b.j.GrowAtEnd(a.j, d.FullRange()), "arming it again does nothing")
		require.Error(t, b.j.GrowAtEnd(a.j, SMRange{0, sms - 2}), "another grow on the same trigger")
		assert.Equal(t, 1, b.j.ArmedGrows())
		<-a.j.Done()
		if adopt == "resize" {
			done, total, perr := b.j.Progress(ctx)
			st, err := b.j.Resize(ctx, d.FullRange())
			require.NoError(t, err, "grown job at %d of %d blocks (%v) when its trigger ended", done, total, perr)
			assert.True(t, st.Deferred && st.Grow, "%+v", st)
			assert.Equal(t, d.FullRange(), b.j.Range())
			t.Logf("adopted by Resize in %v", st.Host)
		}
		check("trigger", a)
		on := check("grown", b)
		assert.Equal(t, 0, b.j.ArmedGrows())
		assert.Equal(t, 1, deferred(b), "adopted by %s", adopt)
		t.Logf("adopted by %s: %d of %d blocks ran on the trigger's SMs", adopt, on, b.n)
		assert.Positive(t, on, "the grow ran no block on the trigger's SMs")
	}

	// The grown job ends first: its grow is abandoned, then runs on an
	// empty queue when the trigger ends; a job launched meanwhile (which may
	// get any pooled control block) runs every block once.
	b, a := launch2(100, low, 2000, high)
	c := prep(40)
	require.NoError(t, b.j.GrowAtEnd(a.j, d.FullRange()))
	assert.Zero(t, check("ends first", b), "no block ran on the trigger's SMs")
	assert.Zero(t, deferred(b))
	start(&c, low)
	check("launched meanwhile", c)
	check("trigger", a)
	d.reapZombies(true)
	d.growMu.Lock()
	zombies := len(d.zombies)
	d.growMu.Unlock()
	assert.Zero(t, zombies, "the abandoned grow ran once its trigger ended")
	cs := download[uint32](t, d, b.counts, b.n)
	for i, n := range cs {
		require.Equal(t, uint32(1), n, "block %d of the job that ended first, after its grow ran", i)
	}

	// The trigger moves before it ends: the grow starts at its drain.
	b, a = launch2(2000, low, 800, high)
	require.NoError(t, b.j.GrowAtEnd(a.j, d.FullRange()))
	time.Sleep(time.Millisecond)
	_, err := a.j.Resize(ctx, SMRange{sms - sms/4, sms - 1})
	require.NoError(t, err)
	check("moved trigger", a)
	check("grown at the trigger's drain", b)
	assert.Equal(t, 1, deferred(b), "adopted at its end")
}
