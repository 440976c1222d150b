package profile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/slatec/slatec/runtime"
)

// ArgKind says what an --args item makes.
type ArgKind int

const (
	// ArgBuf is a device buffer filled with deterministic random data: the
	// input of the kernel.
	ArgBuf ArgKind = iota
	// ArgOut is a device buffer filled with zeros: an output.
	ArgOut
	// ArgScalar is a value passed by value.
	ArgScalar
)

func (k ArgKind) String() string {
	switch k {
	case ArgBuf:
		return "buf"
	case ArgOut:
		return "out"
	case ArgScalar:
		return "scalar"
	}
	return fmt.Sprintf("ArgKind(%d)", int(k))
}

// Elem is an element or scalar type of --args, named the way the SPEC
// spells it (f32, i64, ...).
type Elem string

// The element types --args knows. f16 and bf16 are the bit patterns of
// __half and __nv_bfloat16; bool exists only as a scalar.
const (
	F32  Elem = "f32"
	F64  Elem = "f64"
	F16  Elem = "f16"
	BF16 Elem = "bf16"
	I8   Elem = "i8"
	U8   Elem = "u8"
	I16  Elem = "i16"
	U16  Elem = "u16"
	I32  Elem = "i32"
	U32  Elem = "u32"
	I64  Elem = "i64"
	U64  Elem = "u64"
	Bool Elem = "bool"
)

type numClass int

const (
	numFloat numClass = iota
	numHalf           // f16 and bf16: 2-byte floating point, passed as bits
	numSigned
	numUnsigned
	numBool
)

type elemInfo struct {
	size  int
	class numClass
}

var elemTable = map[Elem]elemInfo{
	F32: {4, numFloat}, F64: {8, numFloat}, F16: {2, numHalf}, BF16: {2, numHalf},
	I8: {1, numSigned}, U8: {1, numUnsigned}, I16: {2, numSigned}, U16: {2, numUnsigned},
	I32: {4, numSigned}, U32: {4, numUnsigned}, I64: {8, numSigned}, U64: {8, numUnsigned},
	Bool: {1, numBool},
}

// elemOrder lists the element types for messages, in a stable order.
var elemOrder = []Elem{F32, F64, F16, BF16, I8, U8, I16, U16, I32, U32, I64, U64}

// Size returns the element's size in bytes (0 for an unknown element).
func (e Elem) Size() int { return elemTable[e].size }

func (e Elem) valid() bool { _, ok := elemTable[e]; return ok }

func elemList(withBool bool) string {
	var s []string
	for _, e := range elemOrder {
		s = append(s, string(e))
	}
	if withBool {
		s = append(s, string(Bool))
	}
	return strings.Join(s, ", ")
}

// MaxBufferBytes bounds one buffer. It is far above any GPU's memory; its
// purpose is to keep count × size from overflowing before the device says
// the allocation does not fit.
const MaxBufferBytes = 1 << 46

// Arg is one parsed item of --args.
type Arg struct {
	Index int    // position in SPEC, from 0
	Text  string // the item as written, for messages
	Kind  ArgKind
	Elem  Elem
	Count int64 // elements of a buffer

	// The scalar's value, in the field its Elem's class uses: Int for
	// signed integers, Uint for unsigned ones and bool (0 or 1), Float for
	// f32, f64, f16 and bf16.
	Int   int64
	Uint  uint64
	Float float64
}

// Bytes returns the size of a buffer in bytes (0 for a scalar).
func (a Arg) Bytes() int64 {
	if a.Kind == ArgScalar {
		return 0
	}
	return a.Count * int64(a.Elem.Size())
}

// IsBuffer reports whether the argument is a device buffer.
func (a Arg) IsBuffer() bool { return a.Kind == ArgBuf || a.Kind == ArgOut }

// SpecError is a problem in the --args SPEC itself (its syntax), or in how
// it fits the kernel's parameters. The CLI reports it as a usage error:
// the fix is a different command line.
type SpecError struct {
	Item int    // 0-based item index, or -1 for the SPEC as a whole
	Text string // the item
	Msg  string
}

func (e *SpecError) Error() string {
	if e.Item < 0 {
		return "--args: " + e.Msg
	}
	return fmt.Sprintf("--args item %d (%q): %s", e.Item+1, e.Text, e.Msg)
}

// ParseArgs parses an --args SPEC: comma-separated items, each one of
//
//	buf:<elem>:<count>   a device buffer of random data (inputs)
//	out:<elem>:<count>   a zeroed device buffer (outputs)
//	<elem>:<value>       a scalar, e.g. i32:16777216, f32:2.5, bool:true
//
// Counts and integer values accept the binary suffixes K, M and G (16M is
// 16×2^20), matching the power-of-two sizes kernels are usually run at.
// All problems are reported, joined, as *SpecError values.
func ParseArgs(spec string) ([]Arg, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, &SpecError{Item: -1, Msg: "empty; give one item per kernel parameter, e.g. buf:f32:1M,out:f32:1M,i32:1M"}
	}
	var args []Arg
	var errs []error
	for i, item := range strings.Split(spec, ",") {
		a, err := parseArg(i, strings.TrimSpace(item))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		args = append(args, a)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return args, nil
}

func parseArg(i int, item string) (Arg, error) {
	bad := func(format string, a ...any) error {
		return &SpecError{Item: i, Text: item, Msg: fmt.Sprintf(format, a...)}
	}
	a := Arg{Index: i, Text: item}
	parts := strings.Split(item, ":")
	if item == "" {
		return a, bad("empty item (two commas in a row?)")
	}
	switch parts[0] {
	case "buf", "out":
		if len(parts) != 3 {
			return a, bad("a buffer is %s:<elem>:<count>, e.g. %s:f32:16M", parts[0], parts[0])
		}
		a.Kind = ArgBuf
		if parts[0] == "out" {
			a.Kind = ArgOut
		}
		a.Elem = Elem(strings.ToLower(parts[1]))
		if !a.Elem.valid() || a.Elem == Bool {
			return a, bad("unknown element type %q; expected one of %s", parts[1], elemList(false))
		}
		n, err := parseCount(parts[2])
		if err != nil {
			return a, bad("count: %v", err)
		}
		if n < 1 {
			return a, bad("count must be at least 1, got %d", n)
		}
		if n > MaxBufferBytes/int64(a.Elem.Size()) {
			return a, bad("%d elements of %s is more than %d bytes", n, a.Elem, int64(MaxBufferBytes))
		}
		a.Count = n
		return a, nil
	}
	if len(parts) != 2 {
		return a, bad("expected buf:<elem>:<count>, out:<elem>:<count> or <type>:<value> (types: %s)", elemList(true))
	}
	a.Kind = ArgScalar
	a.Elem = Elem(strings.ToLower(parts[0]))
	info, ok := elemTable[a.Elem]
	if !ok {
		return a, bad("unknown scalar type %q; expected one of %s (or buf:/out: for a buffer)", parts[0], elemList(true))
	}
	v := strings.TrimSpace(parts[1])
	switch info.class {
	case numBool:
		switch strings.ToLower(v) {
		case "true", "1":
			a.Uint = 1
		case "false", "0":
			a.Uint = 0
		default:
			return a, bad("bool value must be true, false, 1 or 0, got %q", v)
		}
	case numFloat, numHalf:
		bits := 64
		if info.size == 4 {
			bits = 32
		}
		f, err := strconv.ParseFloat(v, bits)
		if err != nil {
			return a, bad("not a %s number: %q", a.Elem, v)
		}
		if info.class == numHalf && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > halfMax(a.Elem) {
			return a, bad("%v is out of range for %s (max %g)", f, a.Elem, halfMax(a.Elem))
		}
		a.Float = f
	case numSigned:
		n, err := parseInt(v, info.size*8)
		if err != nil {
			return a, bad("%v", err)
		}
		a.Int = n
	case numUnsigned:
		n, err := parseUint(v, info.size*8)
		if err != nil {
			return a, bad("%v", err)
		}
		a.Uint = n
	}
	return a, nil
}

func halfMax(e Elem) float64 {
	if e == BF16 {
		return float64(math.Float32frombits(0x7f7f0000))
	}
	return 65504
}

// suffix splits a binary K/M/G suffix off a number.
func suffix(s string) (string, int64) {
	if s == "" {
		return s, 1
	}
	switch s[len(s)-1] {
	case 'k', 'K':
		return s[:len(s)-1], 1 << 10
	case 'm', 'M':
		return s[:len(s)-1], 1 << 20
	case 'g', 'G':
		return s[:len(s)-1], 1 << 30
	}
	return s, 1
}

// parseCount parses a non-negative count with an optional K/M/G suffix.
func parseCount(s string) (int64, error) {
	n, err := parseInt(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("must not be negative, got %d", n)
	}
	return n, nil
}

// parseInt parses a signed integer of the given width with an optional
// K/M/G suffix; the base follows Go's syntax (0x, 0o, 0b prefixes).
func parseInt(s string, bits int) (int64, error) {
	num, mul := suffix(s)
	n, err := strconv.ParseInt(num, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	if mul > 1 {
		if n > math.MaxInt64/mul || n < math.MinInt64/mul {
			return 0, fmt.Errorf("%q overflows a 64-bit integer", s)
		}
		n *= mul
	}
	lo, hi := int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits)
	if n < lo || n > hi {
		return 0, fmt.Errorf("%q is out of range for a %d-bit signed integer (%d..%d)", s, bits, lo, hi)
	}
	return n, nil
}

func parseUint(s string, bits int) (uint64, error) {
	num, mul := suffix(s)
	if strings.HasPrefix(num, "-") {
		return 0, fmt.Errorf("%q is negative; the type is unsigned", s)
	}
	n, err := strconv.ParseUint(num, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("not an unsigned integer: %q", s)
	}
	if mul > 1 {
		if n > math.MaxUint64/uint64(mul) {
			return 0, fmt.Errorf("%q overflows a 64-bit integer", s)
		}
		n *= uint64(mul)
	}
	if hi := uint64(math.MaxUint64) >> (64 - bits); n > hi {
		return 0, fmt.Errorf("%q is out of range for a %d-bit unsigned integer (0..%d)", s, bits, hi)
	}
	return n, nil
}

// Bound is an argument checked against the kernel parameter it fills.
type Bound struct {
	Arg   Arg
	Param runtime.Param
	// Value is the Go value the runtime marshals for a scalar (int32 for
	// an int parameter, float32 for float, uint16 bits for __half, ...);
	// nil for a buffer, whose device address is known only once it is
	// allocated.
	Value any
}

// CheckArgs binds the SPEC's items to the kernel's parameters, in order.
// Pointers take buffers; a buffer's element type must match what the
// pointer points to when slatec knows that type (float* takes f32; a
// float4* takes f32 in multiples of 4; void* and structs take anything).
// Scalars must have the parameter's size and be integer or floating point
// like it; an integer value is converted to the parameter's signedness
// when it fits. Every problem is reported, as *SpecError values.
func CheckArgs(args []Arg, l runtime.ParamLayout) ([]Bound, error) {
	if len(args) != len(l.Params) {
		return nil, &SpecError{Item: -1, Msg: fmt.Sprintf("%d items for %d parameters; the kernel takes (%s)",
			len(args), len(l.Params), signature(l))}
	}
	var errs []error
	out := make([]Bound, len(args))
	for i, a := range args {
		p := l.Params[i]
		v, err := bind(a, p)
		if err != nil {
			errs = append(errs, &SpecError{Item: i, Text: a.Text, Msg: fmt.Sprintf("parameter %d (%s): %v", i+1, paramText(p), err)})
			continue
		}
		out[i] = Bound{Arg: a, Param: p, Value: v}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func paramText(p runtime.Param) string { return strings.TrimSpace(p.CType + " " + p.Name) }

func signature(l runtime.ParamLayout) string {
	s := make([]string, len(l.Params))
	for i, p := range l.Params {
		s[i] = paramText(p)
	}
	return strings.Join(s, ", ")
}

func bind(a Arg, p runtime.Param) (any, error) {
	ti, known := runtime.CTypeInfo(p.CType)
	if known && ti.Kind == runtime.KindPointer {
		if !a.IsBuffer() {
			return nil, fmt.Errorf("a pointer takes a buffer: buf:<elem>:<count> or out:<elem>:<count>")
		}
		return nil, checkPointee(a, p.CType)
	}
	if a.IsBuffer() {
		return nil, fmt.Errorf("%s is passed by value; give a scalar (<type>:<value>), not a buffer", p.CType)
	}
	if _, ok := elemFor(ti.Kind, ti.Size, p.CType); !known || !ok {
		return nil, fmt.Errorf("slatec cannot build a value of this type from --args (scalars: %s)", elemList(true))
	}
	info := elemTable[a.Elem]
	want := func() string { return suggestScalar(ti, p.CType) }
	if info.size != ti.Size {
		return nil, fmt.Errorf("%s is %d bytes, the parameter %d; use %s", a.Elem, info.size, ti.Size, want())
	}
	switch ti.Kind {
	case runtime.KindFloat:
		if info.class != numFloat {
			return nil, fmt.Errorf("a floating-point parameter takes %s", want())
		}
		if ti.Size == 4 {
			return float32(a.Float), nil
		}
		return a.Float, nil
	case runtime.KindHalf:
		if info.class != numHalf {
			return nil, fmt.Errorf("a half-precision parameter takes %s", want())
		}
		if isBFloat(p.CType) != (a.Elem == BF16) {
			return nil, fmt.Errorf("%s has the wrong 16-bit float format; use %s", a.Elem, want())
		}
		return halfOrBF16Bits(a.Elem, float32(a.Float)), nil
	case runtime.KindBool:
		if info.class != numBool {
			return nil, fmt.Errorf("a bool parameter takes bool:true or bool:false")
		}
		return a.Uint == 1, nil
	case runtime.KindSigned, runtime.KindUnsigned, runtime.KindChar:
		if info.class != numSigned && info.class != numUnsigned {
			return nil, fmt.Errorf("an integer parameter takes %s", want())
		}
		return convertInt(a, ti)
	}
	return nil, fmt.Errorf("slatec cannot build a value of this type from --args (scalars: %s)", elemList(true))
}

// convertInt converts an integer item to the parameter's Go type, checking
// the value's range when the signedness differs (u32:3000000000 does not
// fit an int).
func convertInt(a Arg, ti runtime.TypeInfo) (any, error) {
	bits := ti.Size * 8
	signedSrc := elemTable[a.Elem].class == numSigned
	if ti.Kind == runtime.KindUnsigned {
		var u uint64
		if signedSrc {
			if a.Int < 0 {
				return nil, fmt.Errorf("%d is negative; the parameter is unsigned", a.Int)
			}
			u = uint64(a.Int)
		} else {
			u = a.Uint
		}
		switch bits {
		case 8:
			return uint8(u), nil
		case 16:
			return uint16(u), nil
		case 32:
			return uint32(u), nil
		}
		return u, nil
	}
	// Signed (plain char is passed as int8, which the runtime accepts).
	var s int64
	if signedSrc {
		s = a.Int
	} else {
		if hi := uint64(math.MaxInt64) >> (64 - bits); a.Uint > hi {
			return nil, fmt.Errorf("%d does not fit the signed parameter (max %d)", a.Uint, hi)
		}
		s = int64(a.Uint)
	}
	switch bits {
	case 8:
		return int8(s), nil
	case 16:
		return int16(s), nil
	case 32:
		return int32(s), nil
	}
	return s, nil
}

// suggestScalar names the --args scalar type for a C type.
func suggestScalar(ti runtime.TypeInfo, ctype string) string {
	if e, ok := elemFor(ti.Kind, ti.Size, ctype); ok {
		return fmt.Sprintf("%s:<value>", e)
	}
	return "a scalar of the parameter's type"
}

// elemFor maps a C scalar kind and size to the --args element type.
func elemFor(k runtime.TypeKind, size int, ctype string) (Elem, bool) {
	switch k {
	case runtime.KindFloat:
		if size == 4 {
			return F32, true
		}
		return F64, true
	case runtime.KindHalf:
		if isBFloat(ctype) {
			return BF16, true
		}
		return F16, true
	case runtime.KindBool:
		return Bool, true
	case runtime.KindSigned, runtime.KindChar:
		return Elem(fmt.Sprintf("i%d", size*8)), true
	case runtime.KindUnsigned:
		return Elem(fmt.Sprintf("u%d", size*8)), true
	}
	return "", false
}

func isBFloat(ctype string) bool { return strings.Contains(ctype, "bfloat16") }

// normType strips qualifiers from a C type and normalises spacing, so that
// "const float * __restrict__" becomes "float*".
func normType(t string) string {
	t = strings.NewReplacer("*", " * ", "&", " & ").Replace(t)
	var out []string
	for _, w := range strings.Fields(t) {
		switch w {
		case "const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class", "typename":
			continue
		}
		out = append(out, w)
	}
	s := strings.ReplaceAll(strings.Join(out, " "), " *", "*")
	return strings.TrimPrefix(strings.TrimPrefix(s, "::"), "std::")
}

// checkPointee checks a buffer's element type against what the pointer
// parameter points to. A mismatch (f64 data for a float*) would make the
// kernel read garbage or past the end of the buffer without any fault.
func checkPointee(a Arg, ctype string) error {
	t := normType(ctype)
	var pointee string
	switch {
	case strings.Contains(t, "["): // float a[] or float a[16]: decays to float*
		pointee = strings.TrimSpace(t[:strings.Index(t, "[")])
	default:
		pointee = strings.TrimSpace(strings.TrimSuffix(t, "*"))
	}
	if strings.HasSuffix(pointee, "*") {
		return fmt.Errorf("a pointer to pointers cannot be filled from --args (its elements would have to be device addresses)")
	}
	ti, ok := runtime.CTypeInfo(pointee)
	if !ok {
		return nil // void*, a struct or a template type: any element fits
	}
	info := elemTable[a.Elem]
	kind, size := ti.Kind, ti.Size
	if ti.Kind == runtime.KindVector {
		kind, size = ti.Elem, ti.ElemLen
		if a.Count%int64(ti.Len) != 0 {
			return fmt.Errorf("%s has %d components: the count must be a multiple of %d, got %d", pointee, ti.Len, ti.Len, a.Count)
		}
	}
	want, _ := elemFor(kind, size, pointee)
	match := info.size == size
	switch kind {
	case runtime.KindFloat:
		match = match && info.class == numFloat
	case runtime.KindHalf:
		match = match && info.class == numHalf && (a.Elem == BF16) == isBFloat(pointee)
	case runtime.KindSigned, runtime.KindUnsigned, runtime.KindChar, runtime.KindBool:
		match = match && (info.class == numSigned || info.class == numUnsigned)
	}
	if !match {
		return fmt.Errorf("the pointer is to %s; use %s elements (%s:%s:<count>)", pointee, want, a.Kind, want)
	}
	return nil
}

// GlobalBytes sums the buffers' sizes: G, the global memory the kernel
// needs while it runs, in Liang et al.'s memory constraint.
func GlobalBytes(args []Arg) uint64 {
	var n uint64
	for _, a := range args {
		n += uint64(a.Bytes())
	}
	return n
}

// LargestBuffer returns the element count of the largest buffer (by
// elements), or 0 without buffers. The CLI's default grid gives each of
// its elements one thread.
func LargestBuffer(args []Arg) int64 {
	var n int64
	for _, a := range args {
		if a.IsBuffer() {
			n = max(n, a.Count)
		}
	}
	return n
}
