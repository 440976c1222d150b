package profile

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slatec/slatec/plan"
)

// ProbeLoad is what runs beside the latency probe in one of
// PressureRunner's windows: nothing, the DRAM stream on the device's last
// Stream SMs, or (Kernel) the profiled kernel launched over and over on
// every SM the probe leaves.
type ProbeLoad struct {
	Stream int
	Kernel bool
}

// PressureRunner is a Target that can measure its dram_pressure: a
// pointer-chase probe on the device's first SMs, its pace beside the DRAM
// stream at several loads and beside the kernel.
type PressureRunner interface {
	// ProbeRate runs the probe on SMs [0, probe-1] beside load and returns
	// its pace (its logical blocks a second) over window, counted once
	// both are running.
	ProbeRate(ctx context.Context, probe int, load ProbeLoad, window time.Duration) (float64, error)
	// StreamGBs is the DRAM stream's bandwidth alone on its last stream
	// SMs (LoadedRunner's).
	StreamGBs(ctx context.Context, stream int) (float64, error)
}

// probeSMs is how many SMs the latency probe takes; the kernel runs on the
// rest. Two keep the probe's own traffic near 3% of an H100's bandwidth.
const probeSMs = 2

// probeWindow is how long one probe window counts.
const probeWindow = 5 * time.Millisecond

// PressureCalibration is the probe's slowdown beside the DRAM stream at
// several loads, read back to a kernel's dram_pressure: each point's
// StreamGBs is the stream's own bandwidth, Slowdown the probe's.
type PressureCalibration []plan.LoadedPoint

// pressureStreams is the DRAM stream's SM counts of the calibration on a
// device of sms SMs: loadedStreams' (light to half the device) and every
// SM the probe leaves, so that the curve reaches a kernel's heaviest load.
func pressureStreams(sms int) []int {
	out := loadedStreams(sms)
	if full := sms - probeSMs; full >= 1 && (len(out) == 0 || full > out[len(out)-1]) {
		out = append(out, full)
	}
	return out
}

// dramPressure measures the kernel's dram_pressure: the probe's pace
// alone, beside the stream on each of pressureStreams' SM counts and
// beside the kernel, reps rounds alternating (so that drift falls on all),
// the medians' slowdowns, and the kernel's read back off the stream's
// curve. It also returns the curve, for the notes.
func dramPressure(ctx context.Context, pr PressureRunner, sms, reps int) (*plan.Pressure, PressureCalibration, float64, error) {
	if sms <= probeSMs {
		return nil, nil, 0, fmt.Errorf("dram_pressure needs more than %d SMs, the device has %d", probeSMs, sms)
	}
	streams := pressureStreams(sms)
	loads := []ProbeLoad{{}, {Kernel: true}}
	for _, k := range streams {
		loads = append(loads, ProbeLoad{Stream: k})
	}
	rates := make([][]float64, len(loads))
	for range max(1, reps) {
		for i, l := range loads {
			r, err := pr.ProbeRate(ctx, probeSMs, l, probeWindow)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("dram_pressure, %s: %w", l, err)
			}
			if !(r > 0) {
				return nil, nil, 0, fmt.Errorf("dram_pressure, %s: the probe made no progress", l)
			}
			rates[i] = append(rates[i], r)
		}
	}
	alone := Median(rates[0])
	kernelSlow := alone / Median(rates[1])
	cal := make(PressureCalibration, 0, len(streams))
	for j, k := range streams {
		gbs, err := pr.StreamGBs(ctx, k)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("the DRAM stream's bandwidth on %d SMs: %w", k, err)
		}
		cal = append(cal, plan.LoadedPoint{StreamGBs: round(gbs, 1), Slowdown: round(alone/Median(rates[2+j]), 3)})
	}
	return &plan.Pressure{SMs: sms - probeSMs, StreamGBs: round(cal.Invert(kernelSlow), 1)}, cal, kernelSlow, nil
}

func (l ProbeLoad) String() string {
	switch {
	case l.Kernel:
		return "beside the kernel"
	case l.Stream > 0:
		return fmt.Sprintf("beside the DRAM stream on %d SMs", l.Stream)
	}
	return "alone"
}

// Invert is the stream bandwidth at which the calibration's probe slows
// down by slow: the piecewise-linear curve through (0, 1) and the points
// (by bandwidth, each slowdown at least those before it: the curve is read
// as monotone), 0 at or below 1, and past the last point on the last
// rising segment's slope, at most twice the last point's bandwidth.
func (c PressureCalibration) Invert(slow float64) float64 {
	if !(slow > 1) {
		return 0
	}
	pts := slices.Clone(c)
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].StreamGBs < pts[b].StreamGBs })
	x0, y0 := 0.0, 1.0
	slope := 0.0 // of the last rising segment, slowdown per GB/s
	for _, p := range pts {
		y := max(p.Slowdown, y0)
		if y > y0 && p.StreamGBs > x0 {
			if slow <= y {
				return x0 + (slow-y0)*(p.StreamGBs-x0)/(y-y0)
			}
			slope = (y - y0) / (p.StreamGBs - x0)
		}
		x0, y0 = p.StreamGBs, y
	}
	if slope <= 0 {
		return x0
	}
	return min(x0+(slow-y0)/slope, 2*x0)
}

// pressureNoteOf says what dram_pressure was read from.
func pressureNoteOf(p *plan.Pressure, cal PressureCalibration, slow float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dram_pressure: on %d SMs the kernel slowed a latency probe %.3fx, as the DRAM stream moving %.1f GB/s would (the stream's:", p.SMs, slow, p.StreamGBs)
	for _, c := range cal {
		fmt.Fprintf(&b, " %.3fx at %.1f GB/s;", c.Slowdown, c.StreamGBs)
	}
	return strings.TrimSuffix(b.String(), ";") + ")"
}
