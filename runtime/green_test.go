package runtime

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestGreenInfoStep(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    GreenInfo
		major int
		step  int
	}{
		{"hopper, CUDA 12 driver: cuda.h's guideline", GreenInfo{SMs: 132}, 9, 8},
		{"ampere guideline", GreenInfo{SMs: 108}, 8, 4},
		{"volta guideline", GreenInfo{SMs: 80}, 7, 2},
		{"reported by a CUDA 13 driver", GreenInfo{SMs: 132, MinPartition: 8, Alignment: 8}, 9, 8},
		{"minimum not a multiple of the alignment", GreenInfo{SMs: 132, MinPartition: 6, Alignment: 4}, 9, 8},
		{"alignment above the minimum", GreenInfo{SMs: 132, MinPartition: 2, Alignment: 8}, 9, 8},
	} {
		g := c.in
		g.fill(c.major)
		if got := g.Step(); got != c.step {
			t.Errorf("%s: Step() = %d, want %d (%+v)", c.name, got, c.step, g)
		}
	}
}

// A native kernel's parameters start at offset 0, each at its alignment.
func TestNativeFrame(t *testing.T) {
	l := LayoutOf("float4*", "const float4*", "float", "int")
	f, err := nativeFrame(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []slot{{0, 8}, {8, 8}, {16, 4}, {20, 4}}
	for i, s := range want {
		if f.slots[i] != s {
			t.Errorf("slot %d = %v, want %v", i, f.slots[i], s)
		}
	}
	if f.size != 24 {
		t.Errorf("size %d, want 24", f.size)
	}
	buf, err := f.marshalNative(l, []any{DevicePtr(0x1000), DevicePtr(0x2000), float32(2.5), int32(-3)})
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(buf[8:]); got != 0x2000 {
		t.Errorf("second pointer %#x", got)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(buf[16:])); got != 2.5 {
		t.Errorf("float %v", got)
	}
	if got := int32(binary.LittleEndian.Uint32(buf[20:])); got != -3 {
		t.Errorf("int %v", got)
	}
	if _, err := f.marshalNative(l, []any{DevicePtr(1)}); err == nil {
		t.Error("too few arguments accepted")
	}
	if _, err := f.marshalNative(l, []any{DevicePtr(1), DevicePtr(2), 2.5, int32(1)}); err == nil {
		t.Error("a float64 for a float accepted")
	}
	if _, err := nativeFrame(ParamLayout{Params: []Param{{Name: "s", CType: "struct S"}}}); err == nil {
		t.Error("a parameter of unknown size accepted")
	}
	empty, err := nativeFrame(ParamLayout{})
	if err != nil || empty.size != 8 {
		t.Errorf("no parameters: %+v, %v", empty, err)
	}
}
