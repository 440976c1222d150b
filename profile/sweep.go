package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Sweep is a parsed --sms value: which SM counts m to measure. It is
// parsed before the device is opened (so a typo fails at once) and
// expanded against the device's SM count M afterwards.
type Sweep struct {
	text string
	all  bool
	step int
	list []sweepItem
}

// sweepItem is one element of a list: a number, a range lo-hi, or "..."
// (a progression continued from the items before it up to the one after).
type sweepItem struct {
	lo, hi int
	dots   bool
}

// ParseSweep parses --sms:
//
//	all         every m from 1 to M
//	step:N      1, N, 2N, 3N, ... and M (1 and M are always included)
//	LIST        comma-separated counts and ranges, e.g. 1,2,4,8 or 1-16,32,132
//
// A list may continue a progression with "...": the items before it set
// the rule (geometric when the last three grow by one integer factor, as
// in 1,2,4,...,128; otherwise arithmetic from the last two, as in
// 8,16,24,...,128), and the item after it ends the progression and is
// included even when the rule does not reach it exactly: 1,2,4,...,132
// is 1 2 4 8 16 32 64 128 132.
func ParseSweep(s string) (Sweep, error) {
	sw := Sweep{text: s}
	t := strings.TrimSpace(s)
	switch {
	case t == "all":
		sw.all = true
		return sw, nil
	case strings.HasPrefix(t, "step:"):
		n, err := strconv.Atoi(strings.TrimPrefix(t, "step:"))
		if err != nil || n < 1 {
			return sw, fmt.Errorf("--sms step:N needs a positive integer N, got %q", s)
		}
		sw.step = n
		return sw, nil
	case t == "":
		return sw, fmt.Errorf("--sms is empty; use all, step:N or a list such as 1,2,4,...,132")
	}
	for _, f := range strings.Split(t, ",") {
		f = strings.TrimSpace(f)
		if f == "..." || f == "…" {
			sw.list = append(sw.list, sweepItem{dots: true})
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 1 {
			return sw, fmt.Errorf("--sms: %q is not a positive SM count (use all, step:N, or counts like 1,2,4 and ranges like 1-16)", f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return sw, fmt.Errorf("--sms: range %q must be LOW-HIGH with LOW <= HIGH", f)
			}
		}
		sw.list = append(sw.list, sweepItem{lo: a, hi: b})
	}
	for i, it := range sw.list {
		if !it.dots {
			continue
		}
		if i < 2 || i == len(sw.list)-1 || sw.list[i-1].dots || sw.list[i-2].dots || sw.list[i+1].dots ||
			sw.list[i-1].lo != sw.list[i-1].hi || sw.list[i-2].lo != sw.list[i-2].hi {
			return sw, fmt.Errorf(`--sms: "..." needs two single counts before it and one after, as in 1,2,4,...,132`)
		}
		if sw.list[i-1].lo <= sw.list[i-2].lo {
			return sw, fmt.Errorf(`--sms: the counts before "..." must increase`)
		}
	}
	return sw, nil
}

// String returns the text the sweep was parsed from.
func (s Sweep) String() string { return s.text }

// Expand returns the SM counts to measure on a device of M SMs, sorted,
// without duplicates. A count above M is an error: it would be measured on
// SMs that do not exist.
func (s Sweep) Expand(M int) ([]int, error) {
	if M < 1 {
		return nil, fmt.Errorf("the device reports %d SMs", M)
	}
	var out []int
	switch {
	case s.all:
		for m := 1; m <= M; m++ {
			out = append(out, m)
		}
		return out, nil
	case s.step > 0:
		out = append(out, 1)
		for m := s.step; m < M; m += s.step {
			out = append(out, m)
		}
		out = append(out, M)
	case len(s.list) == 0:
		return nil, fmt.Errorf("--sms: no SM counts (the sweep was not parsed)")
	default:
		for i, it := range s.list {
			if !it.dots {
				for m := it.lo; m <= it.hi; m++ {
					if m > M {
						return nil, fmt.Errorf("--sms: %d SMs asked for, the device has %d", m, M)
					}
					out = append(out, m)
				}
				continue
			}
			out = append(out, progression(s.list[i-2].lo, s.list[i-1].lo, s.itemBefore(i), s.list[i+1].lo)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// itemBefore returns the count two items before the one two before i (the
// third-last count before "..."), or 0 when there is none.
func (s Sweep) itemBefore(i int) int {
	if i >= 3 && !s.list[i-3].dots && s.list[i-3].lo == s.list[i-3].hi {
		return s.list[i-3].lo
	}
	return 0
}

// progression continues a, b (and z before them, 0 if none) strictly
// below end. It is geometric when z, a, b grow by one integer factor
// (z·f = a, a·f = b), otherwise arithmetic with step b-a. The endpoints
// themselves come from the list.
func progression(a, b, z, end int) []int {
	var out []int
	if z > 0 && a%z == 0 && b%a == 0 && a/z == b/a && b/a > 1 {
		f := b / a
		for m := b * f; m < end; m *= f {
			out = append(out, m)
		}
		return out
	}
	d := b - a
	for m := b + d; m < end; m += d {
		out = append(out, m)
	}
	return out
}
