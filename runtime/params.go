package runtime

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
)

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64

// Param is one original kernel parameter as the transform reports it
// (transform.Result.Kernels[i].Params, docs/ABI.md "Parameter layout").
type Param struct {
	Name  string // as written in the source; used in messages
	CType string // C type text as written, e.g. "const float* __restrict__", "int", "float4", "Options"
	// Size and Align are in bytes; 0 means slatec does not know the type
	// (a user struct). The driver's cuFuncGetParamInfo then supplies the
	// size; without it such a kernel cannot be launched safely.
	Size  int
	Align int
}

// ParamLayout lists a kernel's original parameters in order. The worker
// takes slate_ctl* and slate_cfg before them; the runtime adds those.
type ParamLayout struct {
	Params []Param
}

// LayoutOf builds a ParamLayout from C type texts, filling sizes and
// alignments for the types slatec knows (see CTypeInfo). Names are "p0",
// "p1", ... Convenient for hand-written workers and tests.
func LayoutOf(ctypes ...string) ParamLayout {
	l := ParamLayout{Params: make([]Param, len(ctypes))}
	for i, t := range ctypes {
		p := Param{Name: fmt.Sprintf("p%d", i), CType: t}
		if ti, ok := CTypeInfo(t); ok {
			p.Size, p.Align = ti.Size, ti.Align
		}
		l.Params[i] = p
	}
	return l
}

// TypeKind classifies a C parameter type for argument checking.
type TypeKind int

const (
	KindUnknown  TypeKind = iota // a type slatec does not know: pass [N]byte
	KindPointer                  // any T*: pass DevicePtr
	KindSigned                   // signed integer: pass the Go signed type of that size
	KindUnsigned                 // unsigned integer: pass the Go unsigned type of that size
	KindChar                     // plain char (signedness is the compiler's): int8 or uint8
	KindFloat                    // float or double: float32 / float64
	KindHalf                     // __half, __nv_bfloat16: uint16 holding the bits
	KindBool                     // bool
	KindVector                   // CUDA vector type: a Go array of its element, or [N]byte
)

// TypeInfo is what slatec knows about a C type on the device (LP64).
type TypeInfo struct {
	Kind        TypeKind
	Size, Align int
	// Elem and Len describe a vector type's components (float4: KindFloat
	// of size 4, Len 4).
	Elem    TypeKind
	ElemLen int
	Len     int
}

var scalarTypes = map[string]TypeInfo{}

func init() {
	add := func(k TypeKind, size int, names ...string) {
		for _, n := range names {
			scalarTypes[n] = TypeInfo{Kind: k, Size: size, Align: size}
		}
	}
	add(KindBool, 1, "bool", "_Bool")
	add(KindChar, 1, "char")
	add(KindSigned, 1, "signed char", "int8_t")
	add(KindUnsigned, 1, "unsigned char", "uint8_t")
	add(KindSigned, 2, "short", "short int", "signed short", "signed short int", "int16_t")
	add(KindUnsigned, 2, "unsigned short", "unsigned short int", "uint16_t")
	add(KindSigned, 4, "int", "signed", "signed int", "int32_t")
	add(KindUnsigned, 4, "unsigned", "unsigned int", "uint32_t", "uint")
	add(KindSigned, 8, "long", "long int", "signed long", "signed long int", "long long", "long long int",
		"signed long long", "signed long long int", "int64_t", "ptrdiff_t", "ssize_t", "intptr_t")
	add(KindUnsigned, 8, "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int",
		"uint64_t", "size_t", "uintptr_t")
	add(KindFloat, 4, "float")
	add(KindFloat, 8, "double")
	add(KindHalf, 2, "__half", "half", "__nv_bfloat16", "nv_bfloat16")

	// CUDA vector types (vector_types.h): size n*elem; alignment as
	// declared there (3-component types are aligned like their element,
	// the 4-component 64-bit ones to 16).
	vec := func(base string, k TypeKind, esize int, aligns [4]int) {
		for n := 1; n <= 4; n++ {
			scalarTypes[fmt.Sprintf("%s%d", base, n)] = TypeInfo{Kind: KindVector, Size: n * esize,
				Align: aligns[n-1], Elem: k, ElemLen: esize, Len: n}
		}
	}
	vec("char", KindSigned, 1, [4]int{1, 2, 1, 4})
	vec("uchar", KindUnsigned, 1, [4]int{1, 2, 1, 4})
	vec("short", KindSigned, 2, [4]int{2, 4, 2, 8})
	vec("ushort", KindUnsigned, 2, [4]int{2, 4, 2, 8})
	vec("int", KindSigned, 4, [4]int{4, 8, 4, 16})
	vec("uint", KindUnsigned, 4, [4]int{4, 8, 4, 16})
	vec("long", KindSigned, 8, [4]int{8, 16, 8, 16})
	vec("ulong", KindUnsigned, 8, [4]int{8, 16, 8, 16})
	vec("longlong", KindSigned, 8, [4]int{8, 16, 8, 16})
	vec("ulonglong", KindUnsigned, 8, [4]int{8, 16, 8, 16})
	vec("float", KindFloat, 4, [4]int{4, 8, 4, 16})
	vec("double", KindFloat, 8, [4]int{8, 16, 8, 16})
	scalarTypes["dim3"] = TypeInfo{Kind: KindVector, Size: 12, Align: 4, Elem: KindUnsigned, ElemLen: 4, Len: 3}
	for _, n := range []string{"__half2", "half2", "__nv_bfloat162", "nv_bfloat162"} {
		scalarTypes[n] = TypeInfo{Kind: KindVector, Size: 4, Align: 4, Elem: KindHalf, ElemLen: 2, Len: 2}
	}
}

// normCType strips qualifiers and normalises spacing: "const float *
// __restrict__" -> "float*", "unsigned  int" -> "unsigned int".
func normCType(t string) string {
	t = strings.NewReplacer("*", " * ", "&", " & ", "[", " [ ", "]", " ] ").Replace(t)
	var out []string
	for _, w := range strings.Fields(t) {
		switch w {
		case "const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class", "typename":
			continue
		}
		out = append(out, w)
	}
	s := strings.Join(out, " ")
	s = strings.ReplaceAll(s, " *", "*")
	s = strings.TrimPrefix(s, "::")
	s = strings.TrimPrefix(s, "std::")
	return s
}

// CTypeInfo reports what slatec knows about a kernel parameter's C type:
// pointers (and array parameters, which decay to pointers), the standard
// scalar types of the LP64 CUDA ABI, half types and the CUDA vector types.
// ok is false for anything else (user structs, typedefs, template
// parameters): their size must come from the driver.
func CTypeInfo(ctype string) (TypeInfo, bool) {
	n := normCType(ctype)
	if n == "" {
		return TypeInfo{}, false
	}
	if strings.HasSuffix(n, "*") || strings.Contains(n, "[") {
		return TypeInfo{Kind: KindPointer, Size: 8, Align: 8}, true
	}
	ti, ok := scalarTypes[n]
	return ti, ok
}

// slot is where one worker parameter lives in the argument buffer.
type slot struct{ off, size int }

// frame is a worker's full parameter layout: slate_ctl*, slate_cfg, then
// the original parameters.
type frame struct {
	slots []slot
	size  int // bytes the buffer needs (8-byte rounded)
}

func alignUp(x, a int) int { return (x + a - 1) / a * a }

// computeFrame lays the parameters out by the C rules (each at the next
// multiple of its alignment). It fails if a size is unknown.
func computeFrame(l ParamLayout) (frame, error) {
	f := frame{slots: []slot{{0, 8}, {cfgParamOffset, CfgSize}}}
	off := userParamBase
	for i, p := range l.Params {
		if p.Size <= 0 || p.Align <= 0 {
			return frame{}, fmt.Errorf("runtime: parameter %d (%s %s): size of this type is unknown to slatec "+
				"and the driver cannot report it (cuFuncGetParamInfo needs CUDA >= 12.4); set Param.Size and Align",
				i, p.CType, p.Name)
		}
		if p.Align&(p.Align-1) != 0 {
			return frame{}, fmt.Errorf("runtime: parameter %d (%s %s): alignment %d is not a power of two", i, p.CType, p.Name, p.Align)
		}
		off = alignUp(off, p.Align)
		f.slots = append(f.slots, slot{off, p.Size})
		off += p.Size
	}
	f.size = alignUp(off, 8)
	return f, nil
}

// argBytes encodes one Go argument for parameter p (TypeInfo ti, known
// when ok) into exactly size bytes. Mismatches are errors: a kernel reading
// a float where an int was passed computes garbage without any fault.
func argBytes(i int, p Param, size int, v any) ([]byte, error) {
	ti, known := CTypeInfo(p.CType)
	bad := func(want string) error {
		return fmt.Errorf("runtime: argument %d (%s %s): got %T, want %s", i, p.CType, p.Name, v, want)
	}
	le := binary.LittleEndian
	if !known {
		// Opaque type: raw bytes (or a fixed-size numeric array) of exactly
		// the parameter's size.
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Array {
			return nil, bad(fmt.Sprintf("[%d]byte (a type unknown to slatec is passed as raw bytes)", size))
		}
		if n := binary.Size(v); n != size {
			return nil, bad(fmt.Sprintf("a %d-byte array (%T is %d bytes)", size, v, n))
		}
		return binary.Append(nil, le, v)
	}
	if ti.Size != size {
		return nil, fmt.Errorf("runtime: argument %d (%s %s): slatec thinks this type is %d bytes but the kernel's parameter is %d",
			i, p.CType, p.Name, ti.Size, size)
	}
	switch ti.Kind {
	case KindPointer:
		if d, ok := v.(DevicePtr); ok {
			return le.AppendUint64(nil, uint64(d)), nil
		}
		return nil, bad("runtime.DevicePtr")
	case KindBool:
		if b, ok := v.(bool); ok {
			if b {
				return []byte{1}, nil
			}
			return []byte{0}, nil
		}
		return nil, bad("bool")
	case KindHalf:
		if h, ok := v.(uint16); ok {
			return le.AppendUint16(nil, h), nil
		}
		return nil, bad("uint16 (the half's bit pattern)")
	case KindVector:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 && rv.Len() == size {
			return binary.Append(nil, le, v)
		}
		want := scalarGoType(ti.Elem, ti.ElemLen)
		if want == nil || rv.Kind() != reflect.Array || rv.Len() != ti.Len || !elemMatches(rv.Type().Elem(), ti.Elem, ti.ElemLen) {
			return nil, bad(fmt.Sprintf("[%d]%v or [%d]byte", ti.Len, want, size))
		}
		return binary.Append(nil, le, v)
	}
	// Scalars.
	rt := reflect.TypeOf(v)
	if rt == nil || !elemMatches(rt, ti.Kind, ti.Size) {
		if ti.Kind == KindChar {
			return nil, bad("int8 or uint8")
		}
		return nil, bad(scalarGoType(ti.Kind, ti.Size).String())
	}
	return binary.Append(nil, le, v)
}

// elemMatches reports whether Go type t is the scalar of kind k and size n.
// Named types (e.g. a user's `type Count uint32`) match by their kind.
func elemMatches(t reflect.Type, k TypeKind, n int) bool {
	if int(t.Size()) != n {
		return false
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return k == KindSigned || (k == KindChar && n == 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return k == KindUnsigned || (k == KindChar && n == 1) || (k == KindHalf && n == 2)
	case reflect.Float32, reflect.Float64:
		return k == KindFloat
	}
	return false
}

func scalarGoType(k TypeKind, n int) reflect.Type {
	var v any
	switch {
	case k == KindSigned && n == 1, k == KindChar:
		v = int8(0)
	case k == KindSigned && n == 2:
		v = int16(0)
	case k == KindSigned && n == 4:
		v = int32(0)
	case k == KindSigned && n == 8:
		v = int64(0)
	case k == KindUnsigned && n == 1:
		v = uint8(0)
	case (k == KindUnsigned || k == KindHalf) && n == 2:
		v = uint16(0)
	case k == KindUnsigned && n == 4:
		v = uint32(0)
	case k == KindUnsigned && n == 8:
		v = uint64(0)
	case k == KindFloat && n == 4:
		v = float32(0)
	case k == KindFloat && n == 8:
		v = float64(0)
	default:
		return nil
	}
	return reflect.TypeOf(v)
}

// marshal packs args into a new buffer laid out as f. The ctl and cfg slots
// are left zero for the launcher to fill.
func (f *frame) marshal(l ParamLayout, args []any) ([]byte, error) {
	if len(args) != len(l.Params) {
		return nil, fmt.Errorf("runtime: got %d arguments, the kernel takes %d", len(args), len(l.Params))
	}
	// Backed by uint64s so the buffer is 8-byte aligned; the driver copies
	// each parameter out by its size, so stricter alignment is not needed.
	words := make([]uint64, f.size/8)
	buf := reflectBytes(words)
	for i, a := range args {
		s := f.slots[workerPrefixParams+i]
		b, err := argBytes(i, l.Params[i], s.size, a)
		if err != nil {
			return nil, err
		}
		copy(buf[s.off:s.off+s.size], b)
	}
	return buf, nil
}
