package corun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// PartnerPairs is every ordered pair of distinct kernels that share a
// workload of ws, by name, in workload order: the pairs MeasurePartners
// measures for those workloads.
func PartnerPairs(ws []Workload) [][2]*Kernel {
	var out [][2]*Kernel
	seen := map[[2]string]bool{}
	for _, w := range ws {
		for _, a := range w.Kernels {
			for _, c := range w.Kernels {
				key := [2]string{a.Name, c.Name}
				if a.Name == c.Name || seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, [2]*Kernel{a, c})
			}
		}
	}
	return out
}

// PartnerSMs is the SMs of the measured kernel in MeasurePartners on a
// device of M SMs: a quarter (at least 1), its partner the rest.
func PartnerSMs(M int) int { return max(1, M/4) }

// MeasurePartners measures, for each pair (v, p), kernel v's slowdown on
// SMs [0, m-1] (m = PartnerSMs) while p runs over and over on the other
// SMs (two launches in flight, so that its load does not lapse between
// them), over v's time there alone: medians of reps runs, alone and beside
// each partner in turn, each after an L2 flush. The results go to the
// profiles of ps as Beside (replacing earlier measurements of the same
// pair); a kernel ps does not profile is skipped.
func MeasurePartners(ctx context.Context, dev Device, ps *plan.ProfileSet, pairs [][2]*Kernel, reps int, progress func(victim, partner string)) error {
	if reps <= 0 {
		reps = 3
	}
	M := dev.Info().SMs
	m := PartnerSMs(M)
	if m >= M {
		return fmt.Errorf("measuring partners needs at least 2 SMs, the device has %d", M)
	}
	byVictim := map[string][]*Kernel{}
	var victims []*Kernel
	for _, pr := range pairs {
		if ps.KernelIndex(pr[0].Name) < 0 || ps.KernelIndex(pr[1].Name) < 0 {
			continue
		}
		if _, ok := byVictim[pr[0].Name]; !ok {
			victims = append(victims, pr[0])
		}
		byVictim[pr[0].Name] = append(byVictim[pr[0].Name], pr[1])
	}
	for _, v := range victims {
		partners := byVictim[v.Name]
		alone := make([]float64, 0, reps)
		beside := make([][]float64, len(partners))
		for range reps {
			t, err := partnerRun(ctx, dev, v, nil, m)
			if err != nil {
				return fmt.Errorf("%s alone on %d SMs: %w", v.Name, m, err)
			}
			alone = append(alone, t)
			for i, p := range partners {
				if progress != nil {
					progress(v.Name, p.Name)
				}
				t, err := partnerRun(ctx, dev, v, p, m)
				if err != nil {
					return fmt.Errorf("%s on %d SMs beside %s: %w", v.Name, m, p.Name, err)
				}
				beside[i] = append(beside[i], t)
			}
		}
		k := &ps.Kernels[ps.KernelIndex(v.Name)]
		a := median(alone)
		if !(a > 0) {
			return fmt.Errorf("%s alone on %d SMs: no time measured", v.Name, m)
		}
		for i, p := range partners {
			k.Beside = slices.DeleteFunc(k.Beside, func(b plan.BesideSlowdown) bool { return b.Partner == p.Name })
			k.Beside = append(k.Beside, plan.BesideSlowdown{Partner: p.Name, SMs: m, PartnerSMs: M - m, Slowdown: round4(median(beside[i]) / a)})
		}
	}
	return ps.Validate()
}

// partnerRun is one timed run of v on SMs [0, m-1], beside p running over
// and over on the rest (nil: alone), after an L2 flush; v's own span, ms.
func partnerRun(ctx context.Context, dev Device, v, p *Kernel, m int) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if f, ok := dev.(l2Flusher); ok {
		if err := f.FlushL2(); err != nil {
			return 0, err
		}
	}
	M := dev.Info().SMs
	var loads []Job
	// The loads still running when v ends are canceled and waited for, so
	// that none runs into the next measurement.
	defer func() { cleanup(dev, loads) }()
	startLoad := func() error {
		j, err := dev.Start(p, runtime.SMRange{Low: m, High: M - 1})
		if err == nil {
			loads = append(loads, j)
		}
		return err
	}
	if p != nil {
		for range 2 {
			if err := startLoad(); err != nil {
				return 0, fmt.Errorf("starting %s: %w", p.Name, err)
			}
		}
	}
	vj, err := dev.Start(v, runtime.SMRange{Low: 0, High: m - 1})
	if err != nil {
		return 0, err
	}
	for {
		idx, err := dev.WaitAny(ctx, append([]Job{vj}, loads...))
		if err != nil {
			if idx == 0 || ctx.Err() != nil {
				cleanup(dev, []Job{vj})
				return 0, err
			}
			return 0, fmt.Errorf("%s beside it: %w", p.Name, err)
		}
		if idx == 0 {
			break
		}
		loads = slices.Delete(loads, idx-1, idx)
		if err := startLoad(); err != nil {
			return 0, fmt.Errorf("starting %s: %w", p.Name, err)
		}
	}
	s, e := vj.Span()
	return ms(e - s), nil
}
