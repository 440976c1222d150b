package corun

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slatec/slatec/runtime"
)

// A probe runs one workload on one SM split in every combination of how
// each kernel runs there — as a slatec worker on its SM range, as a worker
// launched with two waves, or natively in a green context of the same SMs —
// and each kernel alone in its part, so that a split where slatec's static
// mode loses to green contexts shows which kernel pays, and whether alone
// or only beside its partner. Worker launches are also sampled mid-run for
// how many workers each SM of their range holds (runtime.Job.RankedWorkers).
// A spec of one kernel on all SMs compares its worker with its native
// kernel (the solo worker tax).

// ProbeSpec is a probe's workload and split: "a+b@40:92".
type ProbeSpec struct {
	Kernels []*Kernel
	Split   []int
}

func (s ProbeSpec) String() string { return names(s.Kernels) + "@" + splitText(s.Split) }

// ParseProbe reads "k1+k2[+k3]@n1:n2[:n3]" (the parts sum to the device's
// SMs) or "k@M" (one kernel on all M SMs) against the catalogue.
func ParseProbe(spec string, sms int) (ProbeSpec, error) {
	ks, sp, ok := strings.Cut(spec, "@")
	if !ok {
		return ProbeSpec{}, fmt.Errorf("probe %q: want kernels@split, as triad_f4+gemm_tiled@40:92", spec)
	}
	byName := map[string]*Kernel{}
	for _, k := range Catalogue() {
		byName[k.Name] = k
	}
	var p ProbeSpec
	for _, n := range strings.Split(ks, "+") {
		k := byName[strings.TrimSpace(n)]
		if k == nil {
			return ProbeSpec{}, fmt.Errorf("probe %q: no kernel %q in the catalogue", spec, n)
		}
		p.Kernels = append(p.Kernels, k)
	}
	total := 0
	for _, f := range strings.Split(sp, ":") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return ProbeSpec{}, fmt.Errorf("probe %q: split part %q is not a positive SM count", spec, f)
		}
		p.Split = append(p.Split, n)
		total += n
	}
	switch {
	case len(p.Split) != len(p.Kernels):
		return ProbeSpec{}, fmt.Errorf("probe %q: %d kernels but %d split parts", spec, len(p.Kernels), len(p.Split))
	case len(p.Kernels) > 3:
		return ProbeSpec{}, fmt.Errorf("probe %q: at most 3 kernels", spec)
	case total != sms:
		return ProbeSpec{}, fmt.Errorf("probe %q: the split covers %d SMs, the device has %d", spec, total, sms)
	}
	return p, nil
}

// How a kernel runs in a probe configuration.
const (
	probeAbsent = '-'
	probeWorker = 'w' // the runtime's worker on the kernel's range
	probeWaves2 = '2' // the worker launched with two waves (runtime.WithWaves)
	probeGreen  = 'g' // the native kernel in a green context of the part
	probeNative = 'n' // the native kernel on all SMs (one-kernel specs)
)

// probeConfigs lists the configurations of an n-kernel probe: every kernel
// each way at once, then each alone. (No mixes of workers and green
// contexts: a green partition's SMs are the driver's choice, not a range's,
// and would overlap the workers'.)
func probeConfigs(n int) []string {
	if n == 1 {
		return []string{"w", "n"} // waves apply to partial ranges only
	}
	all := func(c byte) string { return strings.Repeat(string(c), n) }
	out := []string{all(probeWorker), all(probeWaves2), all(probeGreen)}
	for i := range n {
		for _, c := range []byte{probeWorker, probeGreen} {
			b := []byte(all(probeAbsent))
			b[i] = c
			out = append(out, string(b))
		}
	}
	return out
}

// ProbeRow is one configuration's medians.
type ProbeRow struct {
	Spec   string `json:"spec"`
	Config string `json:"config"` // per kernel: w worker, 2 two waves, g green, n native, - absent
	// EndsMs: each kernel's end from the first start, median over reps;
	// 0 for an absent kernel.
	EndsMs     []float64 `json:"ends_ms"`
	MakespanMs float64   `json:"makespan_ms"`
	// Workers: per kernel run as a worker, how many SMs of its range held
	// how many of its workers mid-run ("8x92": 92 SMs with 8), from one
	// untimed sampling run.
	Workers []string `json:"workers,omitempty"`
}

// probeDevice is what a probe needs of the device: the CUDA one.
type probeDevice interface {
	GreenDevice
	NativeDevice
	StartWith(k *Kernel, r runtime.SMRange, opts ...runtime.LaunchOption) (Job, error)
	// SMsOf is the SMs (%smid) of a range of places in the SM order.
	SMsOf(r runtime.SMRange) []int
}

// Probe runs spec's configurations reps times each, in rounds (every
// configuration once a round), and returns their medians. sampleAt is when
// the sampling run reads its workers' counts.
func (b *Bench) Probe(ctx context.Context, spec ProbeSpec, reps int, sampleAt time.Duration) ([]ProbeRow, error) {
	dev, ok := b.Dev.(probeDevice)
	if !ok {
		return nil, unavailable("probes run on the CUDA device")
	}
	b.Opts.defaults()
	if s, ok := b.Dev.(blockTimeSeeder); ok && b.Profiles != nil {
		s.SeedBlockTimes(b.Profiles)
	}
	if reps < 1 {
		reps = 1
	}
	configs := probeConfigs(len(spec.Kernels))
	if len(spec.Kernels) > 1 && dev.GreenGranularity() == 0 {
		return nil, unavailable("%s", dev.GreenUnavailable())
	}
	ranges := rangesOf(spec.Split)
	ends := make([][][]float64, len(configs)) // config, kernel, rep
	rows := make([]ProbeRow, len(configs))
	for c, cfg := range configs {
		ends[c] = make([][]float64, len(cfg))
		rows[c] = ProbeRow{Spec: spec.String(), Config: cfg}
		workers, err := b.probeRun(ctx, dev, spec, ranges, cfg, sampleAt)
		if err != nil {
			return nil, fmt.Errorf("probe %s, config %s: %w", spec, cfg, err)
		}
		rows[c].Workers = workers
	}
	for range reps {
		for c, cfg := range configs {
			e, err := b.probeTimed(ctx, dev, spec, ranges, cfg)
			if err != nil {
				return nil, fmt.Errorf("probe %s, config %s: %w", spec, cfg, err)
			}
			for i := range e {
				ends[c][i] = append(ends[c][i], e[i])
			}
		}
	}
	for c := range configs {
		rows[c].EndsMs = make([]float64, len(spec.Kernels))
		for i, v := range ends[c] {
			if configs[c][i] != probeAbsent {
				rows[c].EndsMs[i] = medianOf(v)
				rows[c].MakespanMs = max(rows[c].MakespanMs, rows[c].EndsMs[i])
			}
		}
	}
	return rows, nil
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// probeStart starts the kernels of cfg.
func probeStart(dev probeDevice, spec ProbeSpec, ranges []runtime.SMRange, cfg string) ([]Job, error) {
	jobs := make([]Job, len(cfg))
	for i, c := range []byte(cfg) {
		k := spec.Kernels[i]
		var err error
		switch c {
		case probeAbsent:
			continue
		case probeWorker:
			jobs[i], err = dev.StartWith(k, ranges[i])
		case probeWaves2:
			jobs[i], err = dev.StartWith(k, ranges[i], runtime.WithWaves(2))
		case probeGreen:
			jobs[i], err = dev.StartGreen(k, spec.Split, i)
		case probeNative:
			jobs[i], err = dev.StartNative(k)
		}
		if err != nil {
			cleanup(dev, jobs)
			return nil, fmt.Errorf("starting %s: %w", k.Name, err)
		}
	}
	return jobs, nil
}

func (b *Bench) probeWait(ctx context.Context, dev Device, jobs []Job) error {
	ctx, cancel := context.WithTimeout(ctx, b.Opts.RunTimeout)
	defer cancel()
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if err := j.Wait(ctx); err != nil {
			cleanup(dev, jobs)
			return err
		}
	}
	return nil
}

// probeTimed is one timed run: each present kernel's end from the first
// start (ms).
func (b *Bench) probeTimed(ctx context.Context, dev probeDevice, spec ProbeSpec, ranges []runtime.SMRange, cfg string) ([]float64, error) {
	if f, ok := b.Dev.(l2Flusher); ok {
		if err := f.FlushL2(); err != nil {
			return nil, err
		}
	}
	jobs, err := probeStart(dev, spec, ranges, cfg)
	if err != nil {
		return nil, err
	}
	if err := b.probeWait(ctx, dev, jobs); err != nil {
		return nil, err
	}
	t0 := time.Duration(math.MaxInt64)
	for _, j := range jobs {
		if j != nil {
			s, _ := j.Span()
			t0 = min(t0, s)
		}
	}
	out := make([]float64, len(jobs))
	for i, j := range jobs {
		if j != nil {
			_, e := j.Span()
			out[i] = ms(e - t0)
		}
	}
	return out, nil
}

// probeRun is the untimed sampling run: sampleAt after the start it reads
// how many workers each SM of a worker's range holds.
func (b *Bench) probeRun(ctx context.Context, dev probeDevice, spec ProbeSpec, ranges []runtime.SMRange, cfg string, sampleAt time.Duration) ([]string, error) {
	jobs, err := probeStart(dev, spec, ranges, cfg)
	if err != nil {
		return nil, err
	}
	t0 := dev.Now()
	for dev.Now()-t0 < sampleAt {
	}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		cj, ok := j.(*cudaJob)
		if !ok {
			continue
		}
		n, err := cj.j.RankedWorkers(ctx)
		if err != nil {
			cleanup(dev, jobs)
			return nil, err
		}
		if n == nil {
			out[i] = "ended"
			continue
		}
		out[i] = workerHistogram(n, dev.SMsOf(ranges[i]))
	}
	if err := b.probeWait(ctx, dev, jobs); err != nil {
		return nil, err
	}
	return out, nil
}

// workerHistogram says how many of the SMs sms hold how many workers:
// "7x3 8x89". A range of all SMs is not counted by the workers
// ("uncounted").
func workerHistogram(n []uint32, sms []int) string {
	count := map[uint32]int{}
	for _, sm := range sms {
		if sm < len(n) {
			count[n[sm]]++
		}
	}
	keys := make([]uint32, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 1 && keys[0] == 0 {
		return "uncounted"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%dx%d", k, count[k])
	}
	return strings.Join(parts, " ")
}

// FormatProbe renders rows as a table: per configuration each kernel's end
// and the makespan, and the ratio of the makespan to the all-green one (or,
// for one kernel, to the native run).
func FormatProbe(rows []ProbeRow, ks []*Kernel) string {
	var sb strings.Builder
	if len(rows) == 0 {
		return ""
	}
	fmt.Fprintf(&sb, "probe %s (medians; ms from the first start)\n", rows[0].Spec)
	ref := 0.0
	for _, r := range rows {
		if !strings.ContainsAny(r.Config, "w2-") {
			ref = r.MakespanMs // all green, or native
		}
	}
	fmt.Fprintf(&sb, "%-8s", "config")
	for _, k := range ks {
		fmt.Fprintf(&sb, " %12s", k.Name)
	}
	fmt.Fprintf(&sb, " %9s %8s  %s\n", "makespan", "/ref", "workers on the range's SMs (count x SMs), mid-run")
	for _, r := range rows {
		fmt.Fprintf(&sb, "%-8s", r.Config)
		for i := range ks {
			if r.Config[i] == probeAbsent {
				fmt.Fprintf(&sb, " %12s", "-")
			} else {
				fmt.Fprintf(&sb, " %12.4f", r.EndsMs[i])
			}
		}
		rel := "-"
		if ref > 0 && !strings.Contains(r.Config, "-") {
			rel = fmt.Sprintf("%.3f", r.MakespanMs/ref)
		}
		fmt.Fprintf(&sb, " %9.4f %8s ", r.MakespanMs, rel)
		var ws []string
		for i, w := range r.Workers {
			if w != "" {
				ws = append(ws, ks[i].Name+": "+w)
			}
		}
		fmt.Fprintf(&sb, " %s\n", strings.Join(ws, "; "))
	}
	return sb.String()
}
