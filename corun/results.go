package corun

import (
	"encoding/json"
	"math"
	"time"
)

// Document is bench/results/corun.json (schema: corun.schema.json beside
// it): one benchmark run on one device.
type Document struct {
	Device string `json:"device"`
	SMs    int    `json:"sms"`
	Commit string `json:"commit"`
	Date   string `json:"date"`
	Quick  bool   `json:"quick"`
	// Profiles says where the planners' profiles came from: a file given
	// with --profiles, or "measured" (MeasureProfiles in the same run).
	Profiles string `json:"profiles"`
	// Timing says how makespans were timed: "gpu-stamps" (%globaltimer
	// before and after every kernel) or "events: WHY" (host launch time
	// plus CUDA event time, which undercounts concurrent modes). Absent in
	// documents written before it existed.
	Timing string `json:"timing,omitempty"`
	// SMOrder says which SMs a range of places means (runtime
	// Device.SMOrderSource): "gpc: ..." (GPC by GPC) or "id..." (%smid
	// order). Absent in documents written before it existed (%smid order).
	SMOrder string `json:"sm_order,omitempty"`
	Rows    []Row  `json:"rows"`
	// Unavailable lists the modes that could not run, and why.
	Unavailable []UnavailableMode `json:"unavailable"`
	Sweeps      []Sweep           `json:"sweeps"`
	Gantts      []Gantt           `json:"gantts"`
	// ResizeLatency summarises every resize of the run (scheduler,
	// oracle): the runtime's retreat-to-drained plus relaunch gap of those
	// that drained, and how many grew without a drain.
	ResizeLatency ResizeLatency `json:"resize_latency"`
}

// Row is one mode's result on one workload.
type Row struct {
	Workload      string `json:"workload"`
	Complementary bool   `json:"complementary"`
	Mode          Mode   `json:"mode"`
	// Setting tells variants of a mode apart: mps "default" or "pct=N".
	Setting    string  `json:"setting,omitempty"`
	MakespanMs float64 `json:"makespan_ms"`
	// WallMs is the host-observed makespan (Outcome.WallMs): an upper
	// bound that makespan_ms must not undercut by more than the host's
	// latencies. Absent in documents written before it existed.
	WallMs float64 `json:"wall_ms,omitempty"`
	// PredictedMs is the planner's prediction (sequential, stm,
	// scheduler), null for modes without one.
	PredictedMs *float64 `json:"predicted_ms"`
	// Gain over sequential: 1 - makespan / sequential makespan.
	Gain float64 `json:"gain"`
	STP  float64 `json:"stp"`
	ANTT float64 `json:"antt"`
	// Split is the chosen SMs per kernel, "A:B[:C]" (static, green,
	// oracle, stm's first phase).
	Split   string      `json:"split,omitempty"`
	Kernels []KernelEnd `json:"kernels"`
	Resizes int         `json:"resizes"`
	Notes   []string    `json:"notes,omitempty"`
}

// KernelEnd is one kernel's end in a run and its slowdown against its
// solo time (the sequential mode's).
type KernelEnd struct {
	Name     string  `json:"name"`
	EndMs    float64 `json:"end_ms"`
	Slowdown float64 `json:"slowdown"`
}

// UnavailableMode is a mode that could not run.
type UnavailableMode struct {
	Workload string `json:"workload"`
	Mode     Mode   `json:"mode"`
	Reason   string `json:"reason"`
}

// Sweep is every split tried for a workload in one mode.
type Sweep struct {
	Workload string       `json:"workload"`
	Mode     Mode         `json:"mode"`
	Best     string       `json:"best"`
	Points   []SweepEntry `json:"points"`
}

// SweepEntry is one split of a sweep.
type SweepEntry struct {
	Split      string  `json:"split"`
	MakespanMs float64 `json:"makespan_ms"`
}

// Gantt is the schedule of one run.
type Gantt struct {
	Workload string       `json:"workload"`
	Mode     Mode         `json:"mode"`
	Segments []GanttEntry `json:"segments"`
}

// GanttEntry is a kernel on SMs [SMLow, SMHigh] over a time span.
type GanttEntry struct {
	Kernel  string  `json:"kernel"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	SMLow   int     `json:"sm_low"`
	SMHigh  int     `json:"sm_high"`
}

// ResizeLatency summarises resize latencies in microseconds: the resizes
// that drained (a shrink, or a move to other SMs) are counted and their
// latencies summarised; grows, which need no drain, are only counted.
type ResizeLatency struct {
	Count int     `json:"count"`
	Grows int     `json:"grows"`
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// WithTask counts the drains whose job's task time is estimated
	// (Resize.Task); OverTaskP99Us is the p99 of latency minus one task
	// over them (the target: <= 30 us), OverTarget how many
	// exceed one task + 30 us.
	WithTask      int     `json:"with_task,omitempty"`
	OverTaskP99Us float64 `json:"over_task_p99_us,omitempty"`
	OverTarget    int     `json:"over_target,omitempty"`
}

// DrainTarget is the slack a drain may take beyond one task (issue 11).
const DrainTarget = 30 * time.Microsecond

// NewDocument turns a run's outcomes (from Bench.Run, sequential first per
// workload) into the results document. Numbers are rounded to 4 decimals
// (0.1 us) so that the file does not carry float noise.
func NewDocument(device string, sms int, commit, date string, quick bool, profiles string, outs []Outcome, names map[string][]string) *Document {
	d := &Document{Device: device, SMs: sms, Commit: commit, Date: date, Quick: quick, Profiles: profiles,
		Rows: []Row{}, Unavailable: []UnavailableMode{}, Sweeps: []Sweep{}, Gantts: []Gantt{}}
	seq := map[string]float64{}
	var drains, overTask []time.Duration
	grows, overTarget := 0, 0
	for _, o := range outs {
		if o.Unavailable != "" {
			d.Unavailable = append(d.Unavailable, UnavailableMode{Workload: o.Workload, Mode: o.Mode, Reason: o.Unavailable})
			continue
		}
		if o.Mode == Sequential {
			seq[o.Workload] = o.MakespanMs
		}
		for _, z := range o.Resizes {
			if z.Grow {
				grows++
			} else {
				drains = append(drains, z.Latency)
				if z.Task > 0 {
					overTask = append(overTask, z.Latency-z.Task)
					if z.Latency-z.Task > DrainTarget {
						overTarget++
					}
				}
			}
		}
		r := Row{Workload: o.Workload, Complementary: o.Complementary, Mode: o.Mode, Setting: o.Setting,
			MakespanMs: round4(o.MakespanMs), WallMs: round4(o.WallMs), Gain: round4(Gain(o.MakespanMs, seq[o.Workload])),
			STP: round4(o.Metrics.STP), ANTT: round4(o.Metrics.ANTT), Resizes: len(o.Resizes), Notes: o.Notes, Kernels: []KernelEnd{}}
		if o.PredictedMs != nil {
			p := round4(*o.PredictedMs)
			r.PredictedMs = &p
		}
		if o.Split != nil {
			r.Split = splitText(o.Split)
		}
		for i, e := range o.Ends {
			ke := KernelEnd{EndMs: round4(e)}
			if i < len(names[o.Workload]) {
				ke.Name = names[o.Workload][i]
			}
			if i < len(o.Metrics.Slowdown) {
				ke.Slowdown = round4(o.Metrics.Slowdown[i])
			}
			r.Kernels = append(r.Kernels, ke)
		}
		d.Rows = append(d.Rows, r)
		if len(o.Sweep) > 0 {
			s := Sweep{Workload: o.Workload, Mode: o.Mode, Best: splitText(o.Split)}
			for _, p := range o.Sweep {
				s.Points = append(s.Points, SweepEntry{Split: splitText(p.Split), MakespanMs: round4(p.MakespanMs)})
			}
			d.Sweeps = append(d.Sweeps, s)
		}
		if o.Mode == Scheduler && len(o.Gantt) > 0 {
			g := Gantt{Workload: o.Workload, Mode: o.Mode}
			for _, s := range o.Gantt {
				g.Segments = append(g.Segments, GanttEntry{Kernel: s.Kernel, StartMs: round4(s.StartMs), EndMs: round4(s.EndMs), SMLow: s.Low, SMHigh: s.High})
			}
			d.Gantts = append(d.Gantts, g)
		}
	}
	d.ResizeLatency = ResizeLatency{Count: len(drains), Grows: grows,
		P50Us: round4(float64(Percentile(drains, 50)) / 1e3), P99Us: round4(float64(Percentile(drains, 99)) / 1e3)}
	if len(overTask) > 0 {
		d.ResizeLatency.WithTask, d.ResizeLatency.OverTarget = len(overTask), overTarget
		d.ResizeLatency.OverTaskP99Us = round4(float64(Percentile(overTask, 99)) / 1e3)
	}
	return d
}

// Marshal writes the document as indented JSON with a final newline.
func (d *Document) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func round4(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1e4) / 1e4
}

// Summary is what the targets look at, per document.
type Summary struct {
	// SchedulerShare is, per complementary workload, the scheduler's gain
	// over sequential as a fraction of the oracle's (target >= 0.9).
	SchedulerShare map[string]float64
	// SchedulerVsBaseline is, per workload, scheduler makespan / the best
	// of sequential and streams (target <= 1.01).
	SchedulerVsBaseline map[string]float64
	// PredictionError is the median relative error of predicted against
	// measured makespans over rows with a prediction (target <= 0.10).
	PredictionError float64
	Predictions     int

	// SchedulerGain and OracleGain are the geomeans, over the
	// complementary workloads, of sequential / scheduler and sequential /
	// oracle makespans; ShareGeomean is (SchedulerGain - 1) / (OracleGain -
	// 1), the "share of the oracle's gain" (target >= 0.9).
	// Complementary counts those workloads; all three are 0 without one
	// that has both modes.
	SchedulerGain, OracleGain, ShareGeomean float64
	Complementary                           int
	// NeverWorse counts the workloads whose SchedulerVsBaseline is at most
	// 1.01 (target: all of them).
	NeverWorse int
	// BeatsGreen and BeatsMPS count the complementary workloads where the
	// scheduler's makespan is below the best green-context split's and
	// below MPS at its better setting (target: all); GreenRuns and MPSRuns
	// count those where the mode ran.
	BeatsGreen, GreenRuns, BeatsMPS, MPSRuns int
	// StaticOverGreen is, per workload with both sweeps, the median over
	// the splits both measured of the static split's makespan over the
	// green context's: the persistent workers' cost against the kernels as
	// written on the same SMs beside the same partner. StaticOverGreenMedian
	// is its median over the workloads (0: none).
	StaticOverGreen       map[string]float64
	StaticOverGreenMedian float64
}

// Summarize computes the targets' figures from the rows.
func (d *Document) Summarize() Summary {
	s := Summary{SchedulerShare: map[string]float64{}, SchedulerVsBaseline: map[string]float64{}, StaticOverGreen: map[string]float64{}}
	type wl struct{ seq, streams, sched, oracle, green, mps float64 }
	by := map[string]*wl{}
	comp := map[string]bool{}
	var errs []float64
	for _, r := range d.Rows {
		w := by[r.Workload]
		if w == nil {
			w = &wl{}
			by[r.Workload] = w
		}
		comp[r.Workload] = r.Complementary
		switch r.Mode {
		case Sequential:
			w.seq = r.MakespanMs
		case Streams:
			w.streams = r.MakespanMs
		case Scheduler:
			w.sched = r.MakespanMs
		case Oracle:
			w.oracle = r.MakespanMs
		case Green:
			w.green = r.MakespanMs
		case MPS: // the better of its settings
			if r.MakespanMs > 0 && (w.mps == 0 || r.MakespanMs < w.mps) {
				w.mps = r.MakespanMs
			}
		}
		if r.PredictedMs != nil && r.MakespanMs > 0 {
			errs = append(errs, RelError(*r.PredictedMs, r.MakespanMs))
		}
	}
	for name, w := range by {
		if w.sched <= 0 || w.seq <= 0 {
			continue
		}
		if comp[name] && w.oracle > 0 && w.oracle < w.seq {
			s.SchedulerShare[name] = round4((w.seq - w.sched) / (w.seq - w.oracle))
		}
		base := w.seq
		if w.streams > 0 {
			base = min(base, w.streams)
		}
		s.SchedulerVsBaseline[name] = round4(w.sched / base)
		if w.sched <= 1.01*base {
			s.NeverWorse++
		}
		if !comp[name] {
			continue
		}
		if w.green > 0 {
			s.GreenRuns++
			if w.sched < w.green {
				s.BeatsGreen++
			}
		}
		if w.mps > 0 {
			s.MPSRuns++
			if w.sched < w.mps {
				s.BeatsMPS++
			}
		}
	}
	var logSched, logOracle float64
	for name, w := range by {
		if comp[name] && w.seq > 0 && w.sched > 0 && w.oracle > 0 {
			logSched += math.Log(w.seq / w.sched)
			logOracle += math.Log(w.seq / w.oracle)
			s.Complementary++
		}
	}
	if s.Complementary > 0 {
		s.SchedulerGain = round4(math.Exp(logSched / float64(s.Complementary)))
		s.OracleGain = round4(math.Exp(logOracle / float64(s.Complementary)))
		if s.OracleGain > 1 {
			s.ShareGeomean = round4((s.SchedulerGain - 1) / (s.OracleGain - 1))
		}
	}
	s.StaticOverGreen = staticOverGreen(d.Sweeps)
	var tax []float64
	for _, v := range s.StaticOverGreen {
		tax = append(tax, v)
	}
	if len(tax) > 0 {
		s.StaticOverGreenMedian = round4(median(tax))
	}
	s.Predictions = len(errs)
	s.PredictionError = round4(median(errs))
	return s
}

// staticOverGreen compares, per workload, the static and green sweeps at
// the splits both measured (Summary.StaticOverGreen).
func staticOverGreen(sweeps []Sweep) map[string]float64 {
	static := map[string]map[string]float64{}
	green := map[string]map[string]float64{}
	for _, sw := range sweeps {
		var into map[string]map[string]float64
		switch sw.Mode {
		case Static:
			into = static
		case Green:
			into = green
		default:
			continue
		}
		m := map[string]float64{}
		for _, p := range sw.Points {
			if p.MakespanMs > 0 {
				m[p.Split] = p.MakespanMs
			}
		}
		into[sw.Workload] = m
	}
	out := map[string]float64{}
	for wl, st := range static {
		var r []float64
		for split, v := range st {
			if g := green[wl][split]; g > 0 {
				r = append(r, v/g)
			}
		}
		if len(r) > 0 {
			out[wl] = round4(median(r))
		}
	}
	return out
}
