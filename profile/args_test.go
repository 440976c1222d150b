package profile

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/runtime"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []Arg
	}{
		{"buf:f32:16M,buf:f32:16M,out:f32:16M,i32:16777216,f32:2.5", []Arg{
			{Index: 0, Text: "buf:f32:16M", Kind: ArgBuf, Elem: F32, Count: 16 << 20},
			{Index: 1, Text: "buf:f32:16M", Kind: ArgBuf, Elem: F32, Count: 16 << 20},
			{Index: 2, Text: "out:f32:16M", Kind: ArgOut, Elem: F32, Count: 16 << 20},
			{Index: 3, Text: "i32:16777216", Kind: ArgScalar, Elem: I32, Int: 16777216},
			{Index: 4, Text: "f32:2.5", Kind: ArgScalar, Elem: F32, Float: 2.5},
		}},
		{"buf:u8:3k, out:F64:2 ,u64:0xff,i64:-4K,bool:true,bool:0,f16:1.5,bf16:-2,u32:1G", []Arg{
			{Index: 0, Text: "buf:u8:3k", Kind: ArgBuf, Elem: U8, Count: 3072},
			{Index: 1, Text: "out:F64:2", Kind: ArgOut, Elem: F64, Count: 2},
			{Index: 2, Text: "u64:0xff", Kind: ArgScalar, Elem: U64, Uint: 255},
			{Index: 3, Text: "i64:-4K", Kind: ArgScalar, Elem: I64, Int: -4096},
			{Index: 4, Text: "bool:true", Kind: ArgScalar, Elem: Bool, Uint: 1},
			{Index: 5, Text: "bool:0", Kind: ArgScalar, Elem: Bool, Uint: 0},
			{Index: 6, Text: "f16:1.5", Kind: ArgScalar, Elem: F16, Float: 1.5},
			{Index: 7, Text: "bf16:-2", Kind: ArgScalar, Elem: BF16, Float: -2},
			{Index: 8, Text: "u32:1G", Kind: ArgScalar, Elem: U32, Uint: 1 << 30},
		}},
	} {
		got, err := ParseArgs(tc.spec)
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.want, got, tc.spec)
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
	}{
		{"", "--args: empty"},
		{"buf:f32", "a buffer is buf:<elem>:<count>"},
		{"out:f32:1:2", "a buffer is out:<elem>:<count>"},
		{"buf:f31:4", `unknown element type "f31"`},
		{"buf:bool:4", `unknown element type "bool"`},
		{"buf:f32:0", "count must be at least 1"},
		{"buf:f32:-3", "must not be negative"},
		{"buf:f32:lots", `not an integer: "lots"`},
		{"buf:f64:99999999999G", "overflows"},
		{"buf:f64:16384G", "more than"},
		{"i33:4", `unknown scalar type "i33"`},
		{"i32:2147483648", "out of range for a 32-bit signed integer"},
		{"i8:-129", "out of range for a 8-bit signed integer"},
		{"u32:-1", "negative; the type is unsigned"},
		{"u16:65536", "out of range for a 16-bit unsigned integer"},
		{"f32:abc", "not a f32 number"},
		{"f16:70000", "out of range for f16"},
		{"bool:yes", "bool value must be"},
		{"i32", "expected buf:<elem>:<count>"},
		{"buf:f32:4,,i32:1", "empty item"},
	} {
		_, err := ParseArgs(tc.spec)
		require.Error(t, err, tc.spec)
		assert.Contains(t, err.Error(), tc.want, tc.spec)
		var se *SpecError
		assert.True(t, errors.As(err, &se), "%s: %T", tc.spec, err)
	}
	// Every bad item is reported, not only the first.
	_, err := ParseArgs("buf:x:1,i32:q,f32:1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "item 1")
	assert.Contains(t, err.Error(), "item 2")
}

func TestArgBytes(t *testing.T) {
	args, err := ParseArgs("buf:f32:1K,out:f64:10,i32:5,buf:u8:3,buf:f16:8")
	require.NoError(t, err)
	assert.Equal(t, []int64{4096, 80, 0, 3, 16}, []int64{args[0].Bytes(), args[1].Bytes(), args[2].Bytes(), args[3].Bytes(), args[4].Bytes()})
	assert.Equal(t, uint64(4096+80+3+16), GlobalBytes(args))
	assert.Equal(t, int64(1024), LargestBuffer(args))
	assert.Equal(t, int64(0), LargestBuffer(args[2:3]))
}

// layout builds a ParamLayout the way Prepare does, from C types.
func layout(ctypes ...string) runtime.ParamLayout { return runtime.LayoutOf(ctypes...) }

func TestCheckArgsValues(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		ctype string
		want  any
	}{
		{"i32:7", "int", int32(7)},
		{"u32:7", "int", int32(7)},
		{"i32:7", "unsigned int", uint32(7)},
		{"u32:4000000000", "unsigned", uint32(4000000000)},
		{"i64:-5", "long long", int64(-5)},
		{"u64:5", "size_t", uint64(5)},
		{"i64:5", "const size_t", uint64(5)},
		{"i16:-3", "short", int16(-3)},
		{"u16:3", "unsigned short", uint16(3)},
		{"i8:-3", "char", int8(-3)},
		{"u8:200", "unsigned char", uint8(200)},
		{"f32:2.5", "float", float32(2.5)},
		{"f32:2.5", "const float", float32(2.5)},
		{"f64:0.1", "double", 0.1},
		{"f16:1", "__half", uint16(0x3c00)},
		{"bf16:1", "__nv_bfloat16", uint16(0x3f80)},
		{"bool:true", "bool", true},
		{"bool:false", "bool", false},
	} {
		args, err := ParseArgs(tc.spec)
		require.NoError(t, err, tc.spec)
		b, err := CheckArgs(args, layout(tc.ctype))
		require.NoError(t, err, "%s for %s", tc.spec, tc.ctype)
		assert.Equal(t, tc.want, b[0].Value, "%s for %s", tc.spec, tc.ctype)
		assert.IsType(t, tc.want, b[0].Value, "%s for %s", tc.spec, tc.ctype)
	}
}

func TestCheckArgsBuffers(t *testing.T) {
	for _, tc := range []struct {
		spec, ctype string
	}{
		{"buf:f32:4", "const float* __restrict__"},
		{"out:f32:4", "float*"},
		{"buf:f64:4", "double *"},
		{"buf:i32:4", "int*"},
		{"buf:u32:4", "int*"}, // same size, other signedness: fine for data
		{"buf:u8:4", "unsigned char*"},
		{"buf:i8:4", "char*"},
		{"buf:u64:4", "size_t*"},
		{"buf:f16:4", "const __half*"},
		{"buf:bf16:4", "__nv_bfloat16*"},
		{"buf:f32:8", "float4*"},
		{"buf:f32:2", "float2*"},
		{"buf:i32:12", "int3*"},
		{"buf:f64:1", "void*"},
		{"buf:u8:100", "const void*"},
		{"buf:f32:4", "Particle*"},
		{"buf:f32:4", "float a[]"},
		{"buf:f32:4", "T*"},
	} {
		args, err := ParseArgs(tc.spec)
		require.NoError(t, err, tc.spec)
		b, err := CheckArgs(args, layout(tc.ctype))
		require.NoError(t, err, "%s for %s", tc.spec, tc.ctype)
		assert.Nil(t, b[0].Value)
		assert.True(t, b[0].Arg.IsBuffer())
	}
}

func TestCheckArgsErrors(t *testing.T) {
	triad := layout("const float* __restrict__", "const float* __restrict__", "float* __restrict__", "int", "float")
	for _, tc := range []struct {
		spec   string
		layout runtime.ParamLayout
		want   []string
	}{
		{"buf:f32:4,buf:f32:4,out:f32:4,i32:4", triad, []string{"4 items for 5 parameters", "the kernel takes (const float* __restrict__ p0, "}},
		{"buf:f32:4,buf:f32:4,out:f32:4,i32:4,f32:1,f32:2", triad, []string{"6 items for 5 parameters"}},
		{"buf:f32:4,i32:4,out:f32:4,i32:4,f32:1", triad, []string{"item 2", "parameter 2 (const float* __restrict__ p1)", "a pointer takes a buffer"}},
		{"buf:f32:4,buf:f32:4,out:f32:4,buf:i32:4,f32:1", triad, []string{"item 4", "int is passed by value"}},
		{"buf:f64:4,buf:f32:4,out:f32:4,i32:4,f32:1", triad, []string{"the pointer is to float; use f32 elements (buf:f32:<count>)"}},
		{"buf:i32:4,buf:f32:4,out:f32:4,i32:4,f32:1", triad, []string{"use f32 elements"}},
		{"buf:f32:4,buf:f32:4,out:f32:4,i64:4,f32:1", triad, []string{"i64 is 8 bytes, the parameter 4; use i32:<value>"}},
		{"buf:f32:4,buf:f32:4,out:f32:4,f32:4,f32:1", triad, []string{"an integer parameter takes i32:<value>"}},
		{"buf:f32:4,buf:f32:4,out:f32:4,i32:4,i32:1", triad, []string{"a floating-point parameter takes f32:<value>"}},
		{"buf:f32:4,buf:f32:4,out:f32:4,i32:4,f64:1", triad, []string{"use f32:<value>"}},
		// Several problems at once.
		{"i32:1,i32:1,out:f32:4,f32:4,f32:1", triad, []string{"item 1", "item 2", "item 4"}},
		{"u32:3000000000", layout("int"), []string{"does not fit the signed parameter"}},
		{"i32:-1", layout("unsigned int"), []string{"-1 is negative; the parameter is unsigned"}},
		{"f16:1", layout("__nv_bfloat16"), []string{"wrong 16-bit float format; use bf16:<value>"}},
		{"buf:f16:4", layout("__nv_bfloat16*"), []string{"use bf16 elements"}},
		{"buf:f32:6", layout("float4*"), []string{"float4 has 4 components: the count must be a multiple of 4"}},
		{"buf:f64:8", layout("float4*"), []string{"use f32 elements"}},
		{"buf:f32:4", layout("float**"), []string{"pointer to pointers"}},
		{"i32:1", layout("Options"), []string{"cannot build a value of this type"}},
		{"i32:1", layout("float4"), []string{"cannot build a value of this type"}},
		{"i32:1", layout("bool"), []string{"i32 is 4 bytes, the parameter 1; use bool:<value>"}},
		{"u8:1", layout("bool"), []string{"a bool parameter takes bool:true"}},
		{"bool:true", layout("char"), []string{"an integer parameter takes i8:<value>"}},
	} {
		args, err := ParseArgs(tc.spec)
		require.NoError(t, err, tc.spec)
		_, err = CheckArgs(args, tc.layout)
		require.Error(t, err, tc.spec)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, tc.spec)
		}
		var se *SpecError
		assert.True(t, errors.As(err, &se), "%s: %T", tc.spec, err)
	}
}

func TestHalfBits(t *testing.T) {
	for _, tc := range []struct {
		v    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{65520, 0x7c00}, // rounds up past the largest finite half
		{1e6, 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{1e-7, 0x0002},                  // 1.68 subnormal steps: rounds to 2
		{6.097555160522461e-05, 0x03ff}, // largest subnormal
		{6.103515625e-05, 0x0400},       // smallest normal
		{1e-9, 0},
		{1.0009765625, 0x3c01},        // exactly representable
		{1.00048828125, 0x3c00},       // halfway between 0x3c00 and 0x3c01: to even
		{1.00146484375, 0x3c02},       // halfway between 0x3c01 and 0x3c02: to even
		{0.333251953125, 0x3555},      // 1/3 in half
		{2.9802322387695312e-08, 0x0}, // half the smallest subnormal: ties to even (0)
	} {
		assert.Equal(t, tc.want, HalfBits(tc.v), "%g", tc.v)
	}
	assert.Equal(t, uint16(0x7e00), HalfBits(float32(math.NaN()))&0x7e00)
	for _, tc := range []struct {
		v    float32
		want uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0.5, 0x3f00},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81},
	} {
		assert.Equal(t, tc.want, BFloat16Bits(tc.v), "%g", tc.v)
	}
	nan := BFloat16Bits(float32(math.NaN()))
	assert.True(t, nan&0x7f80 == 0x7f80 && nan&0x7f != 0, "bf16 NaN stays NaN: %#x", nan)
}

func TestFillerDeterministicAndInRange(t *testing.T) {
	args, err := ParseArgs("buf:f32:1000,buf:f32:1000,buf:u8:999,buf:i8:64,buf:i64:10,buf:f16:10,buf:f64:10,buf:u16:10,buf:i32:10")
	require.NoError(t, err)
	whole := make([]byte, args[0].Bytes())
	NewFiller(args[0]).Fill(whole)
	// Chunked fills give the same bytes as one fill.
	chunked := make([]byte, 0, len(whole))
	f := NewFiller(args[0])
	for _, n := range []int{4, 400, 1596, 2000} {
		c := make([]byte, n)
		f.Fill(c)
		chunked = append(chunked, c...)
	}
	assert.Equal(t, whole, chunked)
	// Another argument of the same type gets other data.
	other := make([]byte, args[1].Bytes())
	NewFiller(args[1]).Fill(other)
	assert.NotEqual(t, whole, other)
	for i := 0; i < len(whole); i += 4 {
		v := math.Float32frombits(uint32(whole[i]) | uint32(whole[i+1])<<8 | uint32(whole[i+2])<<16 | uint32(whole[i+3])<<24)
		require.True(t, v >= 0 && v < 1, "f32 %v", v)
	}
	i8 := make([]byte, args[3].Bytes())
	NewFiller(args[3]).Fill(i8)
	for _, b := range i8 {
		require.Less(t, b, byte(128))
	}
	i64 := make([]byte, args[4].Bytes())
	NewFiller(args[4]).Fill(i64)
	for i := 0; i < len(i64); i += 8 {
		assert.Equal(t, make([]byte, 7), i64[i+1:i+8], "i64 values are below 256")
	}
	h := make([]byte, args[5].Bytes())
	NewFiller(args[5]).Fill(h)
	for i := 0; i < len(h); i += 2 {
		v := uint16(h[i]) | uint16(h[i+1])<<8
		assert.Less(t, v, uint16(0x3c00), "f16 in [0, 1)")
	}
	for _, a := range args {
		b := make([]byte, a.Bytes())
		NewFiller(a).Fill(b)
		assert.NotEqual(t, make([]byte, len(b)), b, "%s is not all zeros", a.Text)
	}
}

func TestParseDim3(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want runtime.Dim3
	}{
		{"4096", runtime.D1(4096)},
		{"64K", runtime.D1(65536)},
		{"64x32", runtime.Dim3{X: 64, Y: 32, Z: 1}},
		{"8x8x4", runtime.Dim3{X: 8, Y: 8, Z: 4}},
		{"16,16", runtime.Dim3{X: 16, Y: 16, Z: 1}},
		{" 32X2 ", runtime.Dim3{X: 32, Y: 2, Z: 1}},
	} {
		got, err := ParseDim3(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{"", "x", "0", "4x0", "1x2x3x4", "64xx2", "-1", "abc", "8589934592"} {
		_, err := ParseDim3(in)
		assert.Error(t, err, "%q", in)
	}
}

func TestDefaultGrid(t *testing.T) {
	args, err := ParseArgs("buf:f32:1000,out:f64:1M,i32:5")
	require.NoError(t, err)
	assert.Equal(t, runtime.D1(4096), DefaultGrid(args, runtime.D1(256)))
	assert.Equal(t, runtime.D1(4), DefaultGrid(args[:1], runtime.D1(256)), "rounded up")
	assert.Equal(t, runtime.Dim3{}, DefaultGrid(args[2:], runtime.D1(256)))
	n, err := ParseSize("48K")
	require.NoError(t, err)
	assert.Equal(t, int64(49152), n)
	_, err = ParseSize("-1")
	assert.Error(t, err)
}
