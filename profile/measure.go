package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Runner runs the profiled kernel once on the SMs [0, m-1] and returns the
// GPU time of the run. It is the only part of profiling that needs a GPU;
// tests use a model of a kernel instead.
type Runner interface {
	Run(ctx context.Context, m int) (time.Duration, error)
}

// Point is the measurement at one SM count.
type Point struct {
	M      int
	Times  []time.Duration // the timed runs, in order (warm-up runs excluded)
	Median time.Duration
}

// Ms returns the median in milliseconds: R[m] in the profile.
func (p Point) Ms() float64 { return float64(p.Median) / float64(time.Millisecond) }

// Event reports progress of Measure: after every run (warm-up included),
// and once more with Point set when an SM count is complete.
type Event struct {
	M            int // SM count being measured
	Index, Count int // position of M in the sweep (from 0), number of counts
	Run, Runs    int // runs done for M (from 1), runs per count (warm-up + reps)
	Time         time.Duration
	Point        *Point // the finished measurement, on the last event for M
}

// MeasureOptions control Measure.
type MeasureOptions struct {
	// Reps is the number of timed runs per SM count; R[m] is their median,
	// which ignores the odd run slowed by a clock change or another
	// process, where a mean would not.
	Reps int
	// Warmup runs per SM count are not timed: the first launch after a
	// change of range pays for module loading, cold caches and TLBs.
	Warmup int
	// RunTimeout bounds one run (0: none): a kernel that hangs must not
	// hang the profiler.
	RunTimeout time.Duration
	// Progress, if set, is called after every run.
	Progress func(Event)
}

// Measure runs r for each SM count in sms: Warmup untimed runs, then Reps
// timed ones, and records their median.
func Measure(ctx context.Context, r Runner, sms []int, o MeasureOptions) ([]Point, error) {
	if o.Reps < 1 {
		return nil, fmt.Errorf("reps must be at least 1, got %d", o.Reps)
	}
	if o.Warmup < 0 {
		return nil, fmt.Errorf("warm-up runs must not be negative, got %d", o.Warmup)
	}
	points := make([]Point, 0, len(sms))
	runs := o.Warmup + o.Reps
	for i, m := range sms {
		p := Point{M: m, Times: make([]time.Duration, 0, o.Reps)}
		for run := 1; run <= runs; run++ {
			d, err := runOnce(ctx, r, m, o.RunTimeout)
			if err != nil {
				return points, fmt.Errorf("m = %d SMs, run %d of %d: %w", m, run, runs, err)
			}
			if d <= 0 {
				return points, fmt.Errorf("m = %d SMs, run %d of %d: the run reported no GPU time (%v)", m, run, runs, d)
			}
			if run > o.Warmup {
				p.Times = append(p.Times, d)
			}
			ev := Event{M: m, Index: i, Count: len(sms), Run: run, Runs: runs, Time: d}
			if run == runs {
				p.Median = Median(p.Times)
				ev.Point = &p
			}
			if o.Progress != nil {
				o.Progress(ev)
			}
		}
		points = append(points, p)
	}
	return points, nil
}

func runOnce(ctx context.Context, r Runner, m int, timeout time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	d, err := r.Run(ctx, m)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
		return 0, fmt.Errorf("%w (a run took longer than %v; raise --timeout if the kernel is that slow)", err, timeout)
	}
	return d, err
}

// Median returns the median of ds (the mean of the middle two for an even
// count), 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

// BandwidthGBs is B[m]: the DRAM traffic of the launch, blocks ×
// bytesPerBlock, over the time t, in GB/s (10^9 bytes/s, the unit of the
// profile's peak_bw_gbs). Zero when the traffic or the time is unknown.
func BandwidthGBs(blocks, bytesPerBlock int64, t time.Duration) float64 {
	if blocks <= 0 || bytesPerBlock <= 0 || t <= 0 {
		return 0
	}
	return float64(blocks) * float64(bytesPerBlock) / t.Seconds() / 1e9
}

// round keeps a measurement's meaningful digits in the profile: CUDA
// events resolve about half a microsecond, so nanoseconds of a millisecond
// value (6 decimals) and thousandths of a GB/s (3) are already noise, and
// shorter numbers keep files readable and diffs small. Going through the
// decimal text gives the float64 nearest to it, which JSON then prints as
// that short decimal (multiplying by 1e-6 would leave ...0000002 tails).
func round(v float64, decimals int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals, 64), 64)
	if err != nil {
		return v
	}
	return r
}
