package corun

import (
	"math"
	"sort"
	"time"
)

// Metrics of one run of a workload (Luley, after Eyerman and Eeckhout; the
// same definitions as plan.Metrics). All kernels arrive at time 0, so a
// kernel's turnaround is its end; its solo turnaround is its time alone on
// all SMs, measured by the sequential mode of the same benchmark run.
type Metrics struct {
	MakespanMs float64
	// ANTT is the mean normalised turnaround end/solo: lower is better, 1
	// means no kernel was slowed.
	ANTT float64
	// STP is the sum of solo/end: higher is better, at most the number of
	// kernels.
	STP float64
	// Slowdown per kernel, end/solo, in workload order.
	Slowdown []float64
}

// ComputeMetrics computes the metrics of kernels ending at ends (ms from
// the run's start) with solo times solo (same order). A kernel with a
// non-positive time counts as not slowed (slowdown 1).
func ComputeMetrics(ends, solo []float64, makespan float64) Metrics {
	m := Metrics{MakespanMs: makespan, Slowdown: make([]float64, len(ends))}
	if len(ends) == 0 {
		return m
	}
	for i := range ends {
		s := 1.0
		if ends[i] > 0 && solo[i] > 0 {
			s = ends[i] / solo[i]
		}
		m.Slowdown[i] = s
		m.ANTT += s
		m.STP += 1 / s
	}
	m.ANTT /= float64(len(ends))
	return m
}

// Gain is the fraction of the baseline's makespan a mode saves: 1 -
// makespan/baseline (0.25: 25% faster; negative: slower).
func Gain(makespan, baseline float64) float64 {
	if baseline <= 0 {
		return 0
	}
	return 1 - makespan/baseline
}

// Percentile returns the p-th percentile (0..100) of ds by the
// nearest-rank method (the smallest value with at least p% of the samples
// at or below it); 0 for no samples.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// median of float64s (the mean of the middle two for an even count).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RelError is |predicted - measured| / measured.
func RelError(predicted, measured float64) float64 {
	if measured <= 0 {
		return math.Inf(1)
	}
	return math.Abs(predicted-measured) / measured
}
