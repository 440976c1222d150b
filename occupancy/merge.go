package occupancy

import (
	"fmt"
	"math"
	"strings"
)

// The merge model: a simple, documented prediction of whether merging
// kernels into one scheduler kernel (slatec merge) beats running them one
// after another. Liang et al. (TPDS 2015, section 5) name its cost: the
// merged kernel has ONE register count, ONE block size and ONE shared-memory
// footprint, the largest of its parts (plus the dispatch), so every kernel's
// blocks run at the merged kernel's occupancy instead of their own.
//
// For kernel i alone: o_i blocks per SM (Compute on its own threads,
// registers and shared memory), w_i = B_i / (o_i · SMs) waves, time T_i
// (measured, or ⌈w_i⌉ wave units when no time is known). In the merged
// kernel: O blocks per SM (Compute on the largest block, the merged
// kernel's registers, the shared-memory union or sum and the largest
// dynamic size). Then
//
//	s_i       = max(1, o_i / O)                 occupancy slowdown: a kernel's
//	                                            throughput is taken to scale with
//	                                            its resident blocks (latency hiding)
//	merged_i  = T_i · (w_i / ⌈w_i⌉) · s_i      the merged kernel has no per-kernel
//	                                            tail: the other kernels fill it
//	D         = δ · Σ B_i / (O · SMs)           dispatch: δ per logical block (the
//	                                            dependent load of mapKernel/mapBlk
//	                                            or the queue atomic), overlapped by
//	                                            the O · SMs resident blocks
//	tail      = max_i (T_i / ⌈w_i⌉ · s_i) / 2     the merged kernel's own tail: after
//	                                            its last dispatch its resident blocks
//	                                            drain, on average half of its longest
//	                                            block (T_i / ⌈w_i⌉ is kernel i's block
//	                                            duration, one wave); a kernel with few
//	                                            long (grid-stride) blocks pays here
//	merged    = Σ merged_i + D + tail,  sequential = Σ T_i
//
// and merging is predicted to lose when merged ≥ sequential. The model is
// deliberately conservative: it credits the merge with filling the kernels'
// tails but not with overlapping complementary resources (a bandwidth-bound
// kernel next to a compute-bound one), which only a profile can show
// (slatec plan's DRR estimate does that); s_i overstates the slowdown of a
// kernel that saturates bandwidth with fewer resident blocks.

// DefaultDispatchUs is δ, the dispatch cost per logical block in
// microseconds: one dependent global load (an L2 hit after the first
// blocks) before the block's first instruction.
const DefaultDispatchUs = 0.5

// MergePart is one kernel of a merge.
type MergePart struct {
	Name string
	// Alone is the kernel's own launch configuration and usage.
	Alone Kernel
	// Blocks is the kernel's number of blocks (0: unknown; the tail and the
	// dispatch are then left out).
	Blocks int64
	// Ms is the kernel's time alone on the whole device (0: unknown; wave
	// units are used, which compares kernels only roughly).
	Ms float64
}

// PartPrediction is the model's view of one kernel.
type PartPrediction struct {
	Name              string  `json:"name"`
	AloneBlocksPerSM  int     `json:"alone_blocks_per_sm"`
	AloneLimiter      Limiter `json:"alone_limiter"`
	MergedBlocksPerSM int     `json:"merged_blocks_per_sm"`
	Slowdown          float64 `json:"slowdown"`
	Waves             float64 `json:"waves,omitempty"`
	AloneTime         float64 `json:"alone_time"`
	MergedTime        float64 `json:"merged_time"`
	// IdleThreads is the share of the merged block's threads idle while
	// this kernel's block runs.
	IdleThreads float64 `json:"idle_threads"`
}

// MergePrediction is the model's verdict.
type MergePrediction struct {
	// Unit is "ms" when every part has a time, else "waves".
	Unit       string           `json:"unit"`
	Parts      []PartPrediction `json:"parts"`
	Merged     Result           `json:"merged"`
	Sequential float64          `json:"sequential"`
	Dispatch   float64          `json:"dispatch"`
	Tail       float64          `json:"tail"`
	Predicted  float64          `json:"predicted"`
	Speedup    float64          `json:"speedup"`
	Loses      bool             `json:"loses"`
	// Reasons say why, most important first.
	Reasons []string `json:"reasons,omitempty"`
}

// Verdict is the one-line summary.
func (p *MergePrediction) Verdict() string {
	if p.Loses {
		return fmt.Sprintf("merging is predicted to lose (%.3fx of sequential) because %s", p.Speedup, strings.Join(p.Reasons, "; "))
	}
	s := fmt.Sprintf("merging is predicted to win (%.3fx of sequential)", p.Speedup)
	if len(p.Reasons) > 0 {
		s += " despite: " + strings.Join(p.Reasons, "; ")
	}
	return s
}

// PredictMerge applies the merge model on d with sms SMs. merged is the
// merged kernel's launch configuration (largest block, its registers,
// static shared memory, largest dynamic size); dispatchUs is δ (≤ 0: the
// default).
func (d Device) PredictMerge(sms int, parts []MergePart, merged Kernel, dispatchUs float64) (*MergePrediction, error) {
	if sms < 1 {
		return nil, fmt.Errorf("merge model: %d SMs", sms)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge model: no kernels")
	}
	if dispatchUs <= 0 {
		dispatchUs = DefaultDispatchUs
	}
	mr, err := d.Compute(merged)
	if err != nil {
		return nil, fmt.Errorf("merged kernel: %v", err)
	}
	if mr.BlocksPerSM == 0 {
		return nil, fmt.Errorf("merged kernel: a block does not fit an SM")
	}
	p := &MergePrediction{Unit: "ms", Merged: mr}
	for _, pt := range parts {
		if pt.Ms <= 0 {
			p.Unit = "waves"
		}
	}
	var blocks int64
	allBlocks := true
	for _, pt := range parts {
		r, err := d.Compute(pt.Alone)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pt.Name, err)
		}
		if r.BlocksPerSM == 0 {
			return nil, fmt.Errorf("%s: a block does not fit an SM", pt.Name)
		}
		pp := PartPrediction{Name: pt.Name, AloneBlocksPerSM: r.BlocksPerSM, AloneLimiter: r.Limiter,
			MergedBlocksPerSM: mr.BlocksPerSM, Slowdown: 1}
		if mr.BlocksPerSM < r.BlocksPerSM {
			pp.Slowdown = float64(r.BlocksPerSM) / float64(mr.BlocksPerSM)
		}
		if merged.Threads > pt.Alone.Threads {
			pp.IdleThreads = 1 - float64(pt.Alone.Threads)/float64(merged.Threads)
		}
		fill := 1.0
		if pt.Blocks > 0 {
			pp.Waves = float64(pt.Blocks) / float64(r.BlocksPerSM*sms)
			fill = pp.Waves / math.Ceil(pp.Waves)
			blocks += pt.Blocks
		} else {
			allBlocks = false
		}
		if p.Unit == "ms" {
			pp.AloneTime = pt.Ms
		} else {
			pp.AloneTime = 1
			if pt.Blocks > 0 {
				pp.AloneTime = math.Ceil(pp.Waves)
			}
		}
		pp.MergedTime = pp.AloneTime * fill * pp.Slowdown
		p.Sequential += pp.AloneTime
		p.Predicted += pp.MergedTime
		p.Parts = append(p.Parts, pp)
	}
	longest := ""
	if allBlocks {
		for i, pp := range p.Parts {
			d := pp.AloneTime / math.Ceil(pp.Waves) * pp.Slowdown / 2
			if d > p.Tail {
				p.Tail, longest = d, parts[i].Name
			}
		}
		p.Predicted += p.Tail
	}
	if allBlocks && p.Unit == "ms" {
		p.Dispatch = dispatchUs * 1e-3 * float64(blocks) / float64(mr.BlocksPerSM*sms)
		p.Predicted += p.Dispatch
	}
	p.Speedup = p.Sequential / p.Predicted
	p.Loses = p.Predicted >= p.Sequential
	for _, pp := range p.Parts {
		if pp.Slowdown <= 1 {
			continue
		}
		why := string(mr.Limiter)
		switch mr.Limiter {
		case LimitRegisters:
			why = fmt.Sprintf("the merged kernel's %d registers per thread", merged.Registers)
		case LimitShared:
			why = fmt.Sprintf("the merged kernel's %d bytes of shared memory per block", merged.StaticShared+merged.DynamicShared)
		case LimitWarps:
			why = fmt.Sprintf("the merged block's %d threads", merged.Threads)
		}
		r := fmt.Sprintf("%s runs %d blocks/SM inside the merged kernel instead of %d alone (%.2fx slower; limited by %s",
			pp.Name, pp.MergedBlocksPerSM, pp.AloneBlocksPerSM, pp.Slowdown, why)
		if pp.IdleThreads > 0 {
			r += fmt.Sprintf(", %.0f%% of its merged block idle", 100*pp.IdleThreads)
		}
		p.Reasons = append(p.Reasons, r+")")
	}
	if p.Dispatch > 0 && p.Dispatch >= 0.02*p.Sequential {
		p.Reasons = append(p.Reasons, fmt.Sprintf("dispatch costs %.4f ms (%.1f%% of sequential; %d logical blocks at %.2f us each over %d resident blocks)",
			p.Dispatch, 100*p.Dispatch/p.Sequential, blocks, dispatchUs, mr.BlocksPerSM*sms))
	}
	if p.Tail > 0 && p.Tail >= 0.02*p.Sequential {
		p.Reasons = append(p.Reasons, fmt.Sprintf("the merged kernel's own tail costs %.4g %s (%.1f%% of sequential): after its last dispatch its resident blocks drain, on average half of %s's block time (one of its %.2f waves)",
			p.Tail, p.Unit, 100*p.Tail/p.Sequential, longest, waveOf(p.Parts, longest)))
	}
	if p.Loses && len(p.Reasons) == 0 {
		p.Reasons = append(p.Reasons, "the kernels' tails are too small to pay for the dispatch")
	}
	return p, nil
}

func waveOf(ps []PartPrediction, name string) float64 {
	for _, p := range ps {
		if p.Name == name {
			return p.Waves
		}
	}
	return 0
}
