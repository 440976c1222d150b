package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCTypeInfo(t *testing.T) {
	for _, c := range []struct {
		ctype       string
		kind        TypeKind
		size, align int
	}{
		{"const float* __restrict__", KindPointer, 8, 8},
		{"float *", KindPointer, 8, 8},
		{"struct Node**", KindPointer, 8, 8},
		{"int a[]", KindPointer, 8, 8},
		{"int", KindSigned, 4, 4},
		{"const int", KindSigned, 4, 4},
		{"unsigned", KindUnsigned, 4, 4},
		{"unsigned  int", KindUnsigned, 4, 4},
		{"long long", KindSigned, 8, 8},
		{"size_t", KindUnsigned, 8, 8},
		{"std::size_t", KindUnsigned, 8, 8},
		{"long", KindSigned, 8, 8},
		{"char", KindChar, 1, 1},
		{"unsigned char", KindUnsigned, 1, 1},
		{"bool", KindBool, 1, 1},
		{"double", KindFloat, 8, 8},
		{"__half", KindHalf, 2, 2},
		{"float4", KindVector, 16, 16},
		{"float3", KindVector, 12, 4},
		{"float2", KindVector, 8, 8},
		{"double2", KindVector, 16, 16},
		{"int3", KindVector, 12, 4},
		{"uchar4", KindVector, 4, 4},
		{"short3", KindVector, 6, 2},
		{"longlong4", KindVector, 32, 16},
		{"dim3", KindVector, 12, 4},
		{"__half2", KindVector, 4, 4},
	} {
		ti, ok := CTypeInfo(c.ctype)
		if !ok || ti.Kind != c.kind || ti.Size != c.size || ti.Align != c.align {
			t.Errorf("CTypeInfo(%q) = %+v, %v; want kind %v size %d align %d", c.ctype, ti, ok, c.kind, c.size, c.align)
		}
	}
	for _, u := range []string{"Affine", "T", "MyParams", "", "const Options"} {
		if _, ok := CTypeInfo(u); ok {
			t.Errorf("CTypeInfo(%q) claims to know it", u)
		}
	}
}

func TestComputeFrame(t *testing.T) {
	// affine__slate(slate_ctl*, slate_cfg, char tag, Affine f, float* out, int n)
	l := LayoutOf("char", "Affine", "float*", "int")
	if _, err := computeFrame(l); err == nil || !strings.Contains(err.Error(), "Affine") {
		t.Fatalf("unknown-size parameter: %v", err)
	}
	l.Params[1].Size, l.Params[1].Align = 24, 8
	f, err := computeFrame(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []slot{{0, 8}, {8, 56}, {64, 1}, {72, 24}, {96, 8}, {104, 4}}
	for i, s := range want {
		if f.slots[i] != s {
			t.Errorf("slot %d = %v, want %v", i, f.slots[i], s)
		}
	}
	if f.size != 112 {
		t.Errorf("size %d, want 112", f.size)
	}
	// float4 after an int aligns to 16.
	f, err = computeFrame(LayoutOf("int", "float4", "double"))
	if err != nil {
		t.Fatal(err)
	}
	if f.slots[2] != (slot{64, 4}) || f.slots[3] != (slot{80, 16}) || f.slots[4] != (slot{96, 8}) || f.size != 104 {
		t.Errorf("frame %+v", f)
	}
}

func TestMarshal(t *testing.T) {
	l := LayoutOf("char", "Affine", "const float* __restrict__", "int", "float4", "unsigned long long", "double", "bool")
	l.Params[1].Size, l.Params[1].Align = 24, 8
	f, err := computeFrame(l)
	if err != nil {
		t.Fatal(err)
	}
	var aff [24]byte
	binary.LittleEndian.PutUint32(aff[0:], math.Float32bits(1.5))
	binary.LittleEndian.PutUint64(aff[8:], math.Float64bits(2.25))
	binary.LittleEndian.PutUint32(aff[16:], 7)
	buf, err := f.marshal(l, []any{int8(-3), aff, DevicePtr(0x7f0000001000), int32(-42), [4]float32{1, 2, 3, 4},
		uint64(1) << 40, math.Pi, true})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	at := func(i int) []byte { s := f.slots[i]; return buf[s.off : s.off+s.size] }
	if int8(at(2)[0]) != -3 {
		t.Error("char")
	}
	if string(at(3)) != string(aff[:]) {
		t.Error("struct bytes")
	}
	if le.Uint64(at(4)) != 0x7f0000001000 {
		t.Error("pointer")
	}
	if int32(le.Uint32(at(5))) != -42 {
		t.Error("int")
	}
	if math.Float32frombits(le.Uint32(at(6)[12:])) != 4 {
		t.Error("float4")
	}
	if le.Uint64(at(7)) != 1<<40 {
		t.Error("u64")
	}
	if math.Float64frombits(le.Uint64(at(8))) != math.Pi {
		t.Error("double")
	}
	if at(9)[0] != 1 {
		t.Error("bool")
	}
	if len(buf)%8 != 0 || len(buf) != f.size {
		t.Errorf("buffer %d bytes", len(buf))
	}
	// ctl and cfg slots are left for the launcher.
	for _, b := range buf[:userParamBase] {
		if b != 0 {
			t.Fatal("prefix not zero")
		}
	}
}

func TestMarshalMismatch(t *testing.T) {
	l := LayoutOf("float*", "int", "float", "size_t", "Opaque", "float4", "char", "__half")
	l.Params[4].Size, l.Params[4].Align = 12, 4
	f, err := computeFrame(l)
	if err != nil {
		t.Fatal(err)
	}
	good := []any{DevicePtr(1), int32(1), float32(1), uint64(1), [12]byte{}, [4]float32{}, uint8('a'), uint16(0x3c00)}
	if _, err := f.marshal(l, good); err != nil {
		t.Fatalf("good args rejected: %v", err)
	}
	type named uint64
	for i, bad := range []any{
		uint64(1),  // pointer param: not a DevicePtr
		int(1),     // Go int is 8 bytes; the C int 4
		int32(1),   // float param given an int
		int64(1),   // size_t is unsigned
		[8]byte{},  // wrong struct size
		[4]int32{}, // float4 given ints
		"x",        // char given a string
		float32(1), // half given a float
	} {
		args := append([]any(nil), good...)
		args[i] = bad
		_, err := f.marshal(l, args)
		if err == nil {
			t.Errorf("argument %d: %T accepted for %s", i, bad, l.Params[i].CType)
			continue
		}
		if !strings.Contains(err.Error(), "argument") {
			t.Errorf("argument %d: unhelpful error %v", i, err)
		}
	}
	// Named types match by kind; [N]byte works for vectors.
	args := append([]any(nil), good...)
	args[3] = named(5)
	args[5] = [16]byte{}
	if _, err := f.marshal(l, args); err != nil {
		t.Errorf("named uint64 / raw float4 bytes: %v", err)
	}
	if _, err := f.marshal(l, good[:3]); err == nil || !strings.Contains(err.Error(), "got 3 arguments") {
		t.Errorf("arity: %v", err)
	}
}

func TestCheckFrame(t *testing.T) {
	l := LayoutOf("char", "Affine", "float*", "int")
	driver := []slot{{0, 8}, {8, 56}, {64, 1}, {72, 24}, {96, 8}, {104, 4}}
	if err := checkFrame(driver, l); err != nil {
		t.Fatalf("driver layout rejected: %v", err)
	}
	l2 := LayoutOf("int", "Affine", "float*", "int") // kernel really has char
	if err := checkFrame(driver, l2); err == nil || !strings.Contains(err.Error(), "driver says 1 bytes") {
		t.Errorf("size mismatch: %v", err)
	}
	bad := append([]slot(nil), driver...)
	bad[4] = slot{104, 8}
	if err := checkFrame(bad, l); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("offset mismatch: %v", err)
	}
	noABI := append([]slot(nil), driver...)
	noABI[1] = slot{8, 8}
	if err := checkFrame(noABI, l); err == nil || !strings.Contains(err.Error(), "ABI") {
		t.Errorf("missing slate_cfg: %v", err)
	}
}

func TestCfgEncoding(t *testing.T) {
	c := Cfg{Total: 1<<40 + 3, GridX: 1, GridY: 2, GridZ: 3, Iters: 4, SMLow: 5, SMHigh: 6, Flags: FlagReset, Workers: 8,
		MagicX: 9, ShiftX: 10, MagicY: 11, ShiftY: 12}
	b := make([]byte, CfgSize)
	c.put(b)
	le := binary.LittleEndian
	got := []uint64{le.Uint64(b)}
	for off := 8; off < CfgSize; off += 4 {
		got = append(got, uint64(le.Uint32(b[off:])))
	}
	want := []uint64{1<<40 + 3, 1, 2, 3, 4, 5, 6, 1, 8, 9, 10, 11, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d = %d, want %d", i, got[i], want[i])
		}
	}
	ctl := make([]byte, CtlSize)
	le.PutUint64(ctl[0:], 10)
	le.PutUint64(ctl[8:], 9)
	le.PutUint32(ctl[16:], 1)
	le.PutUint32(ctl[20:], 77)
	if d := decodeCtl(ctl); d != (Ctl{Next: 10, Done: 9, Retreat: 1, Exited: 77}) {
		t.Errorf("decodeCtl = %+v", d)
	}
}

func TestAutoIters(t *testing.T) {
	for _, c := range []struct {
		total   int64
		workers int
		want    int
	}{
		{0, 100, 1},
		{10, 0, 1},
		{100, 1000, 1},      // fewer blocks than workers
		{2000, 1000, 1},     // 2 per worker: two tasks each
		{3000, 1000, 1},     // 3 per worker
		{8192, 1056, 1},     // 7 per worker of heavy blocks: 7 tasks, not 2
		{12000, 1000, 3},    // 12 per worker: 4 tasks
		{16384, 1056, 3},    // 15 per worker: 5 tasks
		{17000, 1000, 4},    // 17 per worker: floor of 4 amortises the atomic
		{100000, 1000, 4},   // 100 per worker: the floor, 25 tasks each
		{262144, 1056, 4},   // the H100 triad, 248 per worker: 62 tasks each
		{1 << 20, 1000, 16}, // 1048 per worker: ~64 tasks each
		{1 << 24, 1056, 32}, // capped for resize latency
	} {
		if got := AutoIters(c.total, c.workers); got != c.want {
			t.Errorf("AutoIters(%d, %d) = %d, want %d", c.total, c.workers, got, c.want)
		}
	}
	// Every worker gets at least one task whenever there are enough blocks.
	for total := int64(1); total < 5000; total += 37 {
		for _, w := range []int{1, 7, 132, 1056} {
			it := AutoIters(total, w)
			if it < 1 || it > 32 {
				t.Fatalf("AutoIters(%d,%d)=%d out of range", total, w, it)
			}
			if total >= int64(w) && (total+int64(it)-1)/int64(it) < int64(w) {
				t.Fatalf("AutoIters(%d,%d)=%d leaves workers without a task", total, w, it)
			}
		}
	}
}

func TestSMRange(t *testing.T) {
	if !(SMRange{0, 131}).Valid(132) || (SMRange{0, 132}).Valid(132) || (SMRange{5, 4}).Valid(132) || (SMRange{-1, 3}).Valid(132) {
		t.Error("Valid")
	}
	if (SMRange{10, 41}).Count() != 32 {
		t.Error("Count")
	}
}

// TestMagic checks the division constants against the real quotient for
// every divisor shape the grid can have and n at the edges of the range.
func TestMagic(t *testing.T) {
	divisors := []uint32{1, 2, 3, 5, 6, 7, 10, 31, 32, 33, 100, 127, 128, 129, 641, 1000, 4095, 4096, 4097,
		65535, 65536, 65537, 1<<20 + 1, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 1}
	for d := uint32(1); d < 3000; d++ {
		divisors = append(divisors, d)
	}
	ns := []uint32{0, 1, 2, 3, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1, MaxTotal, MaxTotal - 1}
	for i := uint32(0); i < 2000; i++ {
		ns = append(ns, i*2654435761, i, 1<<32-1-i)
	}
	for _, d := range divisors {
		m, s := Magic(d)
		for _, n := range ns {
			got := uint32((uint64(uint32((uint64(n)*uint64(m))>>32)) + uint64(n)) >> s)
			for _, k := range []uint32{n, n - n%d, n - n%d + d - 1} { // multiples and their neighbours
				got = uint32((uint64(uint32((uint64(k)*uint64(m))>>32)) + uint64(k)) >> s)
				if got != k/d {
					t.Fatalf("%d / %d: magic (%d, %d) gives %d, want %d", k, d, m, s, got, k/d)
				}
			}
		}
	}
}

func TestGrowPieces(t *testing.T) {
	for _, c := range []struct {
		from, to SMRange
		want     []SMRange
	}{
		{SMRange{0, 65}, SMRange{0, 131}, []SMRange{{66, 131}}},
		{SMRange{66, 131}, SMRange{0, 131}, []SMRange{{0, 65}}},
		{SMRange{40, 79}, SMRange{0, 131}, []SMRange{{0, 39}, {80, 131}}},
		{SMRange{0, 131}, SMRange{0, 131}, nil}, // same range: a plain resize
		{SMRange{0, 131}, SMRange{0, 65}, nil},  // shrink
		{SMRange{0, 65}, SMRange{10, 131}, nil}, // not a superset
		{SMRange{10, 20}, SMRange{30, 40}, nil}, // disjoint
	} {
		got := growPieces(c.from, c.to)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("growPieces(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestTaskIters(t *testing.T) {
	for _, c := range []struct {
		name    string
		total   int64
		workers int
		blockNs float64
		want    int
	}{
		{"no measurement: AutoIters", 16384, 1056, 0, 3},
		{"NaN: AutoIters", 16384, 1056, math.NaN(), 3},
		{"fewer blocks than workers", 64, 1056, 1e6, 1},
		// The H100 suite's kernels (blocks per worker, block time on a full SM):
		{"gemm_tiled 15/worker, 135 µs blocks: 1, not AutoIters' 3", 16384, 1056, 135e3, 1},
		{"fma_chain 7/worker, 300 µs blocks", 8192, 1056, 300e3, 1},
		{"triad_f4 248/worker, 4.3 µs blocks: the claim rate wants 4", 262144, 1056, 4.3e3, 4},
		{"scale_f4 248/worker, 2.8 µs blocks: the tail caps it at 4", 262144, 1056, 2.8e3, 4},
		{"huge grid of light blocks: the rate bound, 32 at most", 1 << 26, 1056, 300, 32},
		{"vector_add 3.9/worker, 1.5 µs blocks: one task of 4 each", 4096, 1056, 1.5e3, 4},
		{"vector_add as measured on 131 SMs (4.3 µs a block, fixed costs in): still one task each", 4096, 1056, 4.35e3, 4},
		{"medium: 20/worker, 2 µs blocks: the hard rate bound over the tail", 21120, 1056, 2e3, 5},
		{"1.5 heavy blocks per worker: 1 a task", 1584, 1056, 100e3, 1},
		{"long blocks of a long job: resize latency caps nothing below 1", 1 << 20, 1000, 500e3, 1},
	} {
		if got := TaskIters(c.total, c.workers, c.blockNs); got != c.want {
			t.Errorf("%s: TaskIters(%d, %d, %g) = %d, want %d", c.name, c.total, c.workers, c.blockNs, got, c.want)
		}
	}
	// Always in [1, 32]; with more blocks than workers, a worker's task
	// never exceeds its share rounded up.
	for total := int64(1); total < 300000; total = total*3 + 1 {
		for _, w := range []int{1, 7, 132, 1056, 2112} {
			for _, ns := range []float64{50, 500, 5e3, 50e3, 5e6} {
				it := TaskIters(total, w, ns)
				if it < 1 || it > 32 {
					t.Fatalf("TaskIters(%d,%d,%g)=%d out of range", total, w, ns, it)
				}
				if total > int64(w) && float64(it) > math.Ceil(float64(total)/float64(w)) {
					t.Fatalf("TaskIters(%d,%d,%g)=%d exceeds a worker's share", total, w, ns, it)
				}
			}
		}
	}
}

func TestBlockTimeNs(t *testing.T) {
	for _, c := range []struct {
		name         string
		gpuNs        float64
		total        uint64
		iters        uint32
		rangeWorkers int
		want         float64
	}{
		{"every worker busy", 2.1e6, 16384, 1, 1056, 2.1e6 * 1056 / 16384},
		{"fewer tasks than workers: only those ran", 1e6, 64, 1, 1056, 1e6},
		{"tasks of 4 on a light grid: 1024 workers ran", 6e3, 4096, 4, 1056, 6e3 * 1024 / 4096},
		{"nothing measured", 0, 100, 1, 10, 0},
		{"no workers", 1e6, 100, 1, 0, 0},
	} {
		assert.InDelta(t, c.want, blockTimeNs(c.gpuNs, c.total, c.iters, c.rangeWorkers), 1e-6, c.name)
	}
}
