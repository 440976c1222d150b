// Package shares splits a whole number (of SMs, of dispatch slots) in
// proportion to weights, for the runtime's scheduler and the planner.
package shares

import (
	"math"
	"sort"
)

// LargestRemainder splits total into len(w) parts in proportion to w, each
// at least 1 (total >= len(w)), by the largest-remainder method: floors
// first, the rest one by one to the largest fractions (earlier first on
// ties). Non-positive, NaN and infinite weights count as 1.
func LargestRemainder(total int, w []float64) []int {
	n := len(w)
	if n == 0 {
		return nil
	}
	ws := make([]float64, n)
	sum := 0.0
	for i, x := range w {
		if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			x = 1
		}
		ws[i] = x
		sum += x
	}
	out := make([]int, n)
	frac := make([]float64, n)
	used := 0
	for i, x := range ws {
		exact := float64(total) * x / sum
		out[i] = int(math.Floor(exact))
		frac[i] = exact - float64(out[i])
		if out[i] < 1 {
			out[i], frac[i] = 1, 0
		}
		used += out[i]
	}
	if used < total {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return frac[order[a]] > frac[order[b]] })
		for k := 0; used < total; k = (k + 1) % n {
			out[order[k]]++
			used++
		}
	}
	for used > total { // the minimum of 1 overshot: take from the largest
		big := 0
		for i := range out {
			if out[i] > out[big] {
				big = i
			}
		}
		out[big]--
		used--
	}
	return out
}
