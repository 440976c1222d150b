package corun

import (
	"context"
	"fmt"

	"github.com/slatec/slatec/plan"
	"github.com/slatec/slatec/runtime"
)

// MeasureProfiles measures each kernel's R[m] on SMs [0, m-1] for each m of
// sms (the median of reps runs, as `slatec profile` does) and B[m] from the
// kernel's declared traffic, and returns them as a valid profile set. The
// class is left to the planner's rules. Resources the generic Device does
// not report (registers, shared memory, occupancy) are left out; profiles
// from `slatec profile` carry them (--profiles).
func MeasureProfiles(ctx context.Context, dev Device, ks []*Kernel, sms []int, reps int, progress func(kernel string, m int)) (*plan.ProfileSet, error) {
	if reps <= 0 {
		reps = 3
	}
	info := dev.Info()
	b := &Bench{Dev: dev, Opts: Options{Reps: reps}}
	b.Opts.defaults()
	ps := &plan.ProfileSet{Format: "slatec-profile/1", Device: info}
	for _, k := range ks {
		pk := plan.Kernel{Name: k.Name, Blocks: int64(k.Grid.Count()), ThreadsPerBlock: int(k.Block.Count())}
		for _, b := range k.Buffers {
			pk.GlobalBytes += uint64(b.Bytes())
		}
		for _, m := range sms {
			if m < 1 || m > info.SMs {
				return nil, fmt.Errorf("SM count %d outside 1..%d", m, info.SMs)
			}
			if progress != nil {
				progress(k.Name, m)
			}
			one := []*Kernel{k}
			r, err := b.median(ctx, func() (runResult, error) {
				return b.coRun(ctx, one, startRanges(dev, one, []runtime.SMRange{{Low: 0, High: m - 1}}), false)
			})
			if err != nil {
				return nil, fmt.Errorf("profiling %s on %d SMs: %w", k.Name, m, err)
			}
			if r.makespan <= 0 {
				return nil, fmt.Errorf("profiling %s on %d SMs: no time measured", k.Name, m)
			}
			pk.RMs = append(pk.RMs, plan.Sample{M: m, V: r.makespan})
			pk.BWGBs = append(pk.BWGBs, plan.Sample{M: m, V: float64(k.Bytes) / 1e9 / (r.makespan / 1e3)})
		}
		ps.Kernels = append(ps.Kernels, pk)
	}
	ps.Device.SustainedBWGBs = plan.SustainedBW(info.PeakBWGBs, ps.Kernels)
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	return ps, nil
}

// ProfileSweep is the SM counts MeasureProfiles and the GPU script measure:
// every step SMs from step, plus 1 and M.
func ProfileSweep(M, step int) []int {
	if step < 1 {
		step = 1
	}
	out := []int{1}
	for m := step; m < M; m += step {
		if m > 1 {
			out = append(out, m)
		}
	}
	if M > 1 {
		out = append(out, M)
	}
	return out
}
