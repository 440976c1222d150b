// Package plan holds slatec's planners: kernel profiles, the cost models of
// Liang et al. (STM, DRR, leaky bucket), an exhaustive optimal reference,
// Slate's class table, Li et al.'s grouping, CuMAS's transfer-aware
// ordering, and the ANTT/STP metrics used to compare their plans.
//
// Everything here is CPU-only and deterministic: the same profile file
// gives byte-identical plans.
package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// FormatVersion is the value of the "format" field this package reads and
// writes. A file with another value is refused: the numbers in a profile only
// mean something under the definitions of one format version.
const FormatVersion = "slatec-profile/1"

// ProfileSet is one profile file: the device the kernels were measured on and
// the kernels. A file describes exactly one device because R[m] and B[m] are
// properties of a kernel *on a device*; profiles from two GPUs must not be
// mixed in one plan. See FORMAT.md for the field reference.
type ProfileSet struct {
	Format  string   `json:"format"`
	Device  Device   `json:"device"`
	Kernels []Kernel `json:"kernels"`
}

// Device describes the GPU. SMs, PeakBWGBs and MemBytes are M, Pb and Gb in
// Liang et al.'s notation; SustainedBWGBs, when given, replaces Pb in the
// bandwidth penalty (Device.SharedBW). The optional limits let the planner compute
// occupancy (blocks per SM) for kernels that do not state it.
type Device struct {
	Name      string  `json:"name"`
	SMs       int     `json:"sms"`
	PeakBWGBs float64 `json:"peak_bw_gbs"`
	MemBytes  uint64  `json:"mem_bytes"`
	// SustainedBWGBs is the DRAM bandwidth the device sustains (GB/s), what
	// co-running kernels share; `slatec profile` records it (SustainedBW).
	SustainedBWGBs float64 `json:"sustained_bw_gbs,omitempty"`

	PeakGFLOPS       float64 `json:"peak_gflops,omitempty"`
	MaxBlocksPerSM   int     `json:"max_blocks_per_sm,omitempty"`
	MaxThreadsPerSM  int     `json:"max_threads_per_sm,omitempty"`
	RegistersPerSM   int     `json:"registers_per_sm,omitempty"`
	SharedBytesPerSM int     `json:"shared_bytes_per_sm,omitempty"`
}

// LoadedPoint is one loaded run of dram_loaded: the stream's own bandwidth
// (GB/s, alone on its SMs) and the kernel's time beside it over its time
// alone.
type LoadedPoint struct {
	StreamGBs float64 `json:"stream_gbs"`
	Slowdown  float64 `json:"slowdown"`
}

// BesideSlowdown is one measurement of Kernel.Beside: the kernel on its
// first SMs SMs, Partner (a kernel of the same set, by name) on the other
// PartnerSMs, and the kernel's time there over its time there alone.
type BesideSlowdown struct {
	Partner    string  `json:"partner"`
	SMs        int     `json:"sms"`
	PartnerSMs int     `json:"partner_sms"`
	Slowdown   float64 `json:"slowdown"`
}

// Kernel is the profile of one kernel launch. RMs and BWGBs are R[m] and B[m]
// for the SM counts m that were measured; unmeasured m are interpolated
// (see Kernel.R). Class, when set, overrides the Slate classification derived
// from the metrics.
type Kernel struct {
	Name            string  `json:"name"`
	Blocks          int64   `json:"blocks"`
	ThreadsPerBlock int     `json:"threads_per_block"`
	Registers       int     `json:"registers"`
	SharedBytes     int     `json:"shared_bytes"`
	GlobalBytes     uint64  `json:"global_bytes"`
	BlocksPerSM     int     `json:"blocks_per_sm,omitempty"`
	RMs             Samples `json:"r_ms"`
	BWGBs           Samples `json:"bw_gbs"`
	GFLOPS          float64 `json:"gflops,omitempty"`
	// DRAMSensitivity is the kernel's time on half the SMs while a
	// streaming kernel saturates DRAM from the other half, over its time
	// there alone (slatec profile measures it): the slowdown of a kernel
	// that waits on DRAM's loaded latency, which the bandwidth penalty does
	// not see (a pointer chase moving 5% of the bandwidth). 0: not measured.
	DRAMSensitivity float64 `json:"dram_sensitivity,omitempty"`
	// DRAMLoaded is the kernel's slowdown on half the SMs beside the
	// stream on fewer or more SMs, each with the stream's own bandwidth
	// there: the loaded-latency factor at several loads, which the
	// planner interpolates (a kernel's latency grows far less than
	// linearly with the load below saturation: a tiled GEMM of
	// dram_sensitivity 2.30 ran 1.04x slower beside a triad moving half
	// the bandwidth). Empty: not measured.
	DRAMLoaded []LoadedPoint `json:"dram_loaded,omitempty"`
	// Beside is the kernel's slowdown measured beside other kernels of the
	// set (slatec bench --partners): the DRAM stream that dram_loaded was
	// measured against is one kind of neighbour, and kernels differ in how
	// they load DRAM and L2 per byte (on an H200 a pointer chase beside a
	// histogram, split 32:100, ran 1.19 ms where its stream curve at the
	// histogram's bandwidth predicted 1.33). The slate planner scales the
	// kernel's loaded-latency factor for that partner so that it gives
	// the measured slowdown at the measured bandwidth, on split SMs (an
	// overlap phase, on shared SMs, keeps the curve). Empty: the curve
	// alone.
	Beside []BesideSlowdown `json:"beside,omitempty"`
	// NativeMs is the kernel's time as written (its own grid, no
	// persistent worker) on all SMs: what running it alone costs a
	// program without slatec. The slate planner holds a co-run to beat the
	// kernels' native times one after another, not their workers' (R[M]).
	// 0: not measured.
	NativeMs float64   `json:"native_ms,omitempty"`
	Class    Class     `json:"class,omitempty"`
	Transfer *Transfer `json:"transfer,omitempty"`
}

// Transfer holds host-device copy times, used by the Li and CuMAS planners
// (their tasks are H2D copy, kernel, D2H copy). Absent means zero.
type Transfer struct {
	InMs  float64 `json:"in_ms"`
	OutMs float64 `json:"out_ms"`
}

// Sample is one measurement: value V at M SMs.
type Sample struct {
	M int
	V float64
}

// Samples is a set of measurements sorted by M with no duplicates.
//
// JSON accepts two spellings: an object keyed by the SM count in decimal,
// {"1": 9.8, "66": 0.31}, or a dense array whose element i is the value at
// m = i+1, with null for an unmeasured m: [9.8, null, 3.4]. It is always
// written as the object form with keys in increasing numeric order, so that
// files are deterministic and diff well.
type Samples []Sample

// MarshalJSON writes the object form with numerically ordered keys.
func (s Samples) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", strconv.Itoa(p.M))
		v, err := json.Marshal(p.V)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object or the array form. Duplicate keys are an
// error (encoding/json would silently keep the last one).
func (s *Samples) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	var out Samples
	switch tok {
	case json.Delim('{'):
		seen := map[int]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := kt.(string)
			m, err := strconv.Atoi(key)
			if err != nil || strconv.Itoa(m) != key {
				return fmt.Errorf("key %q is not a decimal SM count", key)
			}
			if seen[m] {
				return fmt.Errorf("SM count %d given twice", m)
			}
			seen[m] = true
			v, err := sampleValue(dec, key)
			if err != nil {
				return err
			}
			if v == nil {
				return fmt.Errorf("[%q]: null is allowed only in the array form", key)
			}
			out = append(out, Sample{M: m, V: *v})
		}
	case json.Delim('['):
		for i := 1; dec.More(); i++ {
			v, err := sampleValue(dec, strconv.Itoa(i-1))
			if err != nil {
				return err
			}
			if v != nil {
				out = append(out, Sample{M: i, V: *v})
			}
		}
	default:
		return fmt.Errorf("expected an object {\"m\": value} or an array, got %v", tok)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].M < out[j].M })
	*s = out
	return nil
}

func sampleValue(dec *json.Decoder, where string) (*float64, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case nil:
		return nil, nil
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("[%s]: %v", where, err)
		}
		return &f, nil
	default:
		return nil, fmt.Errorf("[%s]: expected a number, got %v", where, t)
	}
}

// At returns the value at m by the interpolation rule documented in
// FORMAT.md: linear between the two nearest measured SM counts; outside the
// measured range the nearest measurement is carried with the given rule.
// It is a helper for At-style lookups; planners use the precomputed tables
// of a Model instead.
func (s Samples) at(m int, below func(p Sample, m int) float64) float64 {
	i := sort.Search(len(s), func(i int) bool { return s[i].M >= m })
	switch {
	case i < len(s) && s[i].M == m:
		return s[i].V
	case i == 0:
		return below(s[0], m)
	case i == len(s):
		return s[len(s)-1].V
	}
	lo, hi := s[i-1], s[i]
	t := float64(m-lo.M) / float64(hi.M-lo.M)
	return lo.V + t*(hi.V-lo.V)
}

// R returns the latency in ms on m SMs. Between measurements it is linear in
// m. Below the smallest measured m0 it assumes perfect scaling,
// R[m] = R[m0]·m0/m: fewer SMs can never be faster than proportionally, and
// that is the bound the work on m0 SMs implies. Above the largest measured m
// it is flat: the planner does not invent speedup that was not measured.
func (k *Kernel) R(m int) float64 {
	return k.RMs.at(m, func(p Sample, m int) float64 { return p.V * float64(p.M) / float64(m) })
}

// B returns the achieved DRAM bandwidth in GB/s on m SMs: linear between
// measurements, proportional to m below the smallest measurement (each SM
// brings its share of requests), flat above the largest.
func (k *Kernel) B(m int) float64 {
	return k.BWGBs.at(m, func(p Sample, m int) float64 { return p.V * float64(m) / float64(p.M) })
}

// In and Out return the transfer times in ms, zero when absent.
func (k *Kernel) In() float64 {
	if k.Transfer == nil {
		return 0
	}
	return k.Transfer.InMs
}

// Out returns the D2H transfer time in ms, zero when absent.
func (k *Kernel) Out() float64 {
	if k.Transfer == nil {
		return 0
	}
	return k.Transfer.OutMs
}

// Occupancy returns the number of blocks of k resident on one SM: the
// kernel's blocks_per_sm when given, otherwise the minimum over the device
// limits that are known, otherwise 1 (the conservative assumption: it makes
// a kernel look bigger, never smaller, to Li's bin packing).
func (ps *ProfileSet) Occupancy(k *Kernel) int {
	if k.BlocksPerSM > 0 {
		return k.BlocksPerSM
	}
	d := &ps.Device
	occ := math.MaxInt
	if d.MaxBlocksPerSM > 0 {
		occ = min(occ, d.MaxBlocksPerSM)
	}
	if d.MaxThreadsPerSM > 0 && k.ThreadsPerBlock > 0 {
		occ = min(occ, d.MaxThreadsPerSM/k.ThreadsPerBlock)
	}
	if d.RegistersPerSM > 0 && k.Registers > 0 && k.ThreadsPerBlock > 0 {
		occ = min(occ, d.RegistersPerSM/(k.Registers*k.ThreadsPerBlock))
	}
	if d.SharedBytesPerSM > 0 && k.SharedBytes > 0 {
		occ = min(occ, d.SharedBytesPerSM/k.SharedBytes)
	}
	if occ == math.MaxInt || occ < 1 {
		return 1
	}
	return occ
}

// FieldError is one problem in a profile, located by a JSON path such as
// kernels[2].r_ms["64"].
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string { return e.Path + ": " + e.Msg }

// ValidationError lists every problem found in a profile, in file order.
type ValidationError struct{ Problems []FieldError }

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "\n")
}

// Known keys per object, for unknown-field errors that name the path.
var (
	topKeys      = keySet("format", "device", "kernels")
	deviceKeys   = keySet("name", "sms", "peak_bw_gbs", "sustained_bw_gbs", "mem_bytes", "peak_gflops", "max_blocks_per_sm", "max_threads_per_sm", "registers_per_sm", "shared_bytes_per_sm")
	kernelKeys   = keySet("name", "blocks", "threads_per_block", "registers", "shared_bytes", "global_bytes", "blocks_per_sm", "r_ms", "bw_gbs", "gflops", "dram_sensitivity", "dram_loaded", "beside", "native_ms", "class", "transfer")
	transferKeys = keySet("in_ms", "out_ms")
)

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// MaxSMs and MaxKernels bound a profile so that the planners' tables stay
// small; both are far above any current GPU and any sane phase.
const (
	MaxSMs     = 4096
	MaxKernels = 4096
)

// ReadProfileFile reads and validates a profile file.
func ReadProfileFile(path string) (*ProfileSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(data)
}

// ParseProfile decodes and validates a profile. Errors name the offending
// field by its JSON path (or line:column for malformed JSON); a
// *ValidationError lists all semantic problems at once.
func ParseProfile(data []byte) (*ProfileSet, error) {
	var raw struct {
		Format  json.RawMessage   `json:"format"`
		Device  json.RawMessage   `json:"device"`
		Kernels []json.RawMessage `json:"kernels"`
	}
	var probs []FieldError
	add := func(path, format string, a ...any) {
		probs = append(probs, FieldError{path, fmt.Sprintf(format, a...)})
	}

	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(data, "", err)
	}
	if top == nil {
		return nil, FieldError{"(top level)", "expected a JSON object"}
	}
	checkKeys(top, topKeys, "", add)
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, jsonError(data, "", err)
	}
	ps := &ProfileSet{}
	if raw.Format == nil {
		add("format", "missing; expected %q", FormatVersion)
	} else if err := json.Unmarshal(raw.Format, &ps.Format); err != nil {
		add("format", "expected a string")
	} else if ps.Format != FormatVersion {
		add("format", "unsupported format %q; this slatec reads %q", ps.Format, FormatVersion)
	}
	if len(probs) > 0 {
		return nil, &ValidationError{probs}
	}
	if raw.Device == nil {
		add("device", "missing")
	} else if err := decodeObject(raw.Device, &ps.Device, deviceKeys, "device", add); err != nil {
		return nil, err
	}
	if raw.Kernels == nil {
		add("kernels", "missing")
	}
	for i, rk := range raw.Kernels {
		path := fmt.Sprintf("kernels[%d]", i)
		var k Kernel
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(rk, &obj); err == nil && obj != nil {
			if t, ok := obj["transfer"]; ok {
				var tobj map[string]json.RawMessage
				if json.Unmarshal(t, &tobj) == nil && tobj != nil {
					checkKeys(tobj, transferKeys, path+".transfer", add)
				}
			}
		}
		if err := decodeObject(rk, &k, kernelKeys, path, add); err != nil {
			return nil, err
		}
		ps.Kernels = append(ps.Kernels, k)
	}
	if len(probs) > 0 {
		return nil, &ValidationError{probs}
	}
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	return ps, nil
}

func checkKeys(obj map[string]json.RawMessage, known map[string]bool, path string, add func(string, string, ...any)) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			add(joinPath(path, k), "unknown field")
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decodeObject decodes one JSON object into v, reporting unknown keys and
// type errors with the path of the field.
func decodeObject(data json.RawMessage, v any, known map[string]bool, path string, add func(string, string, ...any)) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		add(path, "expected an object")
		return nil
	}
	checkKeys(obj, known, path, add)
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			add(joinPath(path, te.Field), "expected %s, got JSON %s", goTypeName(te.Type.String()), te.Value)
			return nil
		}
		// Errors from Samples.UnmarshalJSON come back unwrapped; find the
		// field by decoding each sample set on its own.
		found := false
		for _, f := range []string{"r_ms", "bw_gbs"} {
			if raw, ok := obj[f]; ok {
				var s Samples
				if e := json.Unmarshal(raw, &s); e != nil {
					add(joinPath(path, f), "%v", e)
					found = true
				}
			}
		}
		if !found {
			add(path, "%v", err)
		}
	}
	return nil
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string", t == "plan.Class":
		return "a string"
	}
	return t
}

// jsonError turns a syntax error offset into line:column.
func jsonError(data []byte, path string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for _, c := range data[:min(int(se.Offset), len(data))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("line %d, column %d: malformed JSON: %v", line, col, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := te.Field
		if f == "" {
			f = "(top level)"
		}
		return FieldError{f, fmt.Sprintf("expected %s, got JSON %s", goTypeName(te.Type.String()), te.Value)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %v", err)
}

// Validate checks the semantic rules of FORMAT.md and returns a
// *ValidationError listing every violation, or nil.
func (ps *ProfileSet) Validate() error {
	var probs []FieldError
	add := func(path, format string, a ...any) {
		probs = append(probs, FieldError{path, fmt.Sprintf(format, a...)})
	}
	if ps.Format != FormatVersion {
		add("format", "unsupported format %q; this slatec reads %q", ps.Format, FormatVersion)
	}
	d := &ps.Device
	if strings.TrimSpace(d.Name) == "" {
		add("device.name", "missing or empty")
	}
	if d.SMs < 1 || d.SMs > MaxSMs {
		add("device.sms", "must be between 1 and %d, got %d", MaxSMs, d.SMs)
	}
	if !positive(d.PeakBWGBs) {
		add("device.peak_bw_gbs", "must be a positive number, got %v", d.PeakBWGBs)
	}
	if d.SustainedBWGBs != 0 && !(positive(d.SustainedBWGBs) && d.SustainedBWGBs <= d.PeakBWGBs) {
		add("device.sustained_bw_gbs", "must be a positive number at most peak_bw_gbs, got %v", d.SustainedBWGBs)
	}
	if d.MemBytes == 0 {
		add("device.mem_bytes", "must be positive")
	}
	if d.PeakGFLOPS < 0 || math.IsInf(d.PeakGFLOPS, 0) || math.IsNaN(d.PeakGFLOPS) {
		add("device.peak_gflops", "must be positive when given")
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max_blocks_per_sm", d.MaxBlocksPerSM}, {"max_threads_per_sm", d.MaxThreadsPerSM}, {"registers_per_sm", d.RegistersPerSM}, {"shared_bytes_per_sm", d.SharedBytesPerSM}} {
		if f.v < 0 {
			add("device."+f.name, "must not be negative, got %d", f.v)
		}
	}
	if len(ps.Kernels) == 0 {
		add("kernels", "at least one kernel is required")
	}
	if len(ps.Kernels) > MaxKernels {
		add("kernels", "at most %d kernels, got %d", MaxKernels, len(ps.Kernels))
	}
	names := map[string]int{}
	for i := range ps.Kernels {
		k := &ps.Kernels[i]
		p := fmt.Sprintf("kernels[%d]", i)
		if strings.TrimSpace(k.Name) == "" {
			add(p+".name", "missing or empty")
		} else if j, dup := names[k.Name]; dup {
			add(p+".name", "%q is also the name of kernels[%d]; names must be unique", k.Name, j)
		} else {
			names[k.Name] = i
		}
		if k.Blocks < 1 || k.Blocks > math.MaxInt32 {
			add(p+".blocks", "must be between 1 and %d, got %d", math.MaxInt32, k.Blocks)
		}
		if k.ThreadsPerBlock < 1 || k.ThreadsPerBlock > 1024 {
			add(p+".threads_per_block", "must be between 1 and 1024, got %d", k.ThreadsPerBlock)
		}
		if k.Registers < 0 || k.Registers > 255 {
			add(p+".registers", "registers per thread must be between 0 and 255, got %d", k.Registers)
		}
		if k.SharedBytes < 0 {
			add(p+".shared_bytes", "must not be negative, got %d", k.SharedBytes)
		}
		if k.DRAMSensitivity != 0 && !positive(k.DRAMSensitivity) {
			add(p+".dram_sensitivity", "must be a positive number when given, got %v", k.DRAMSensitivity)
		}
		if k.NativeMs != 0 && !positive(k.NativeMs) {
			add(p+".native_ms", "must be a positive number when given, got %v", k.NativeMs)
		}
		for j, pt := range k.DRAMLoaded {
			q := fmt.Sprintf("%s.dram_loaded[%d]", p, j)
			if !positive(pt.StreamGBs) {
				add(q+".stream_gbs", "must be a positive number, got %v", pt.StreamGBs)
			}
			if !positive(pt.Slowdown) {
				add(q+".slowdown", "must be a positive number, got %v", pt.Slowdown)
			}
		}
		for j, b := range k.Beside {
			q := fmt.Sprintf("%s.beside[%d]", p, j)
			if strings.TrimSpace(b.Partner) == "" {
				add(q+".partner", "missing or empty")
			}
			if b.SMs < 1 || b.PartnerSMs < 1 || b.SMs+b.PartnerSMs > d.SMs {
				add(q, "sms and partner_sms must be at least 1 and together at most the device's %d, got %d and %d", d.SMs, b.SMs, b.PartnerSMs)
			}
			if !positive(b.Slowdown) {
				add(q+".slowdown", "must be a positive number, got %v", b.Slowdown)
			}
		}
		if k.BlocksPerSM < 0 {
			add(p+".blocks_per_sm", "must be positive when given, got %d", k.BlocksPerSM)
		}
		if k.GFLOPS < 0 || math.IsNaN(k.GFLOPS) || math.IsInf(k.GFLOPS, 0) {
			add(p+".gflops", "must be a non-negative number")
		}
		if k.Class != "" && !k.Class.Valid() {
			add(p+".class", "unknown class %q; expected one of %s", k.Class, strings.Join(classNames(), ", "))
		}
		if k.Transfer != nil {
			if !nonNegative(k.Transfer.InMs) {
				add(p+".transfer.in_ms", "must be a non-negative number")
			}
			if !nonNegative(k.Transfer.OutMs) {
				add(p+".transfer.out_ms", "must be a non-negative number")
			}
		}
		checkSamples(p+".r_ms", k.RMs, d.SMs, true, add)
		checkSamples(p+".bw_gbs", k.BWGBs, d.SMs, false, add)
	}
	if len(probs) > 0 {
		return &ValidationError{probs}
	}
	return nil
}

func checkSamples(path string, s Samples, sms int, strictlyPositive bool, add func(string, string, ...any)) {
	if len(s) == 0 {
		add(path, "at least one measurement is required")
		return
	}
	for i, p := range s {
		kp := fmt.Sprintf("%s[%q]", path, strconv.Itoa(p.M))
		if p.M < 1 || (sms >= 1 && p.M > sms) {
			add(kp, "SM count %d is outside 1..device.sms (%d)", p.M, sms)
		}
		if i > 0 && s[i-1].M >= p.M {
			add(kp, "SM counts must be strictly increasing")
		}
		if strictlyPositive && !positive(p.V) {
			add(kp, "latency must be a positive number, got %v", p.V)
		}
		if !strictlyPositive && !nonNegative(p.V) {
			add(kp, "bandwidth must be a non-negative number, got %v", p.V)
		}
	}
}

func positive(v float64) bool    { return v > 0 && !math.IsInf(v, 0) }
func nonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// Marshal writes the profile deterministically: fixed field order, samples in
// increasing m, two-space indentation and a final newline.
func (ps *ProfileSet) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// KernelIndex returns the index of the kernel with the given name, or -1.
func (ps *ProfileSet) KernelIndex(name string) int {
	for i := range ps.Kernels {
		if ps.Kernels[i].Name == name {
			return i
		}
	}
	return -1
}

// Subset returns the set of the named kernels' profiles, in the order
// named, on the same device; missing is the first name without a profile
// ("" when every name has one, and then the set is not nil).
func (ps *ProfileSet) Subset(names []string) (sub *ProfileSet, missing string) {
	sub = &ProfileSet{Format: ps.Format, Device: ps.Device}
	for _, n := range names {
		i := ps.KernelIndex(n)
		if n == "" || i < 0 {
			return nil, n
		}
		sub.Kernels = append(sub.Kernels, ps.Kernels[i])
	}
	return sub, ""
}

// SharedBW is the bandwidth co-running kernels share in the penalty of
// Liang's equation (3): SustainedBWGBs when the profile gives it, else the
// datasheet peak (the paper's Pb).
func (d Device) SharedBW() float64 {
	if d.SustainedBWGBs > 0 {
		return d.SustainedBWGBs
	}
	return d.PeakBWGBs
}

// SustainedFrac is the share of the datasheet DRAM bandwidth that streaming
// kernels sustain (STREAM-like copies reach 85-92% on HBM and GDDR parts;
// a triad on an H100 87%).
const SustainedFrac = 0.87

// SustainedBW is what `slatec profile` records as sustained_bw_gbs: the
// most bandwidth a profiled kernel reached when that is above SustainedFrac
// of the peak, else SustainedFrac of the peak (a compute-bound kernel says
// nothing about DRAM), and never above the peak. With the datasheet figure
// two memory-bound kernels were predicted to co-run 10-20% faster than
// they can (bench/RESULTS.md, "Co-running").
func SustainedBW(peak float64, ks []Kernel) float64 {
	most := 0.0
	for _, k := range ks {
		for _, s := range k.BWGBs {
			most = max(most, s.V)
		}
	}
	return min(peak, max(most, SustainedFrac*peak))
}
