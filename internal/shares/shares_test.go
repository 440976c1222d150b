package shares

import (
	"fmt"
	"testing"
)

func TestLargestRemainder(t *testing.T) {
	for _, c := range []struct {
		total int
		w     []float64
		want  string
	}{
		{132, []float64{1, 1}, "[66 66]"},
		{132, []float64{1, 1, 1}, "[44 44 44]"},
		{10, []float64{1, 1, 1}, "[4 3 3]"},          // the leftover to the first on ties
		{132, []float64{59632, 9640}, "[114 18]"},    // triad_fma's dispatch shares
		{132, []float64{1e-9, 1e-9, 1}, "[1 1 130]"}, // each keeps one
		{4, []float64{0, -1, 2}, "[1 1 2]"},          // non-positive weights count as 1
		{3, []float64{1e9, 1, 1}, "[1 1 1]"},         // minimums win over proportion
		{0, nil, "[]"},
	} {
		got := LargestRemainder(c.total, c.w)
		if s := fmt.Sprint(got); s != c.want && !(c.w == nil && got == nil) {
			t.Errorf("LargestRemainder(%d, %v) = %s, want %s", c.total, c.w, s, c.want)
		}
		sum := 0
		for _, x := range got {
			sum += x
		}
		if len(got) > 0 && sum != c.total {
			t.Errorf("LargestRemainder(%d, %v) sums to %d", c.total, c.w, sum)
		}
	}
}
