package profile

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// fillSeed makes the input data the same on every run, so that profiles
// taken at different times (or of kernels whose work depends on the data)
// compare like with like.
const fillSeed = 0x5ea7ec

// Filler produces the deterministic random contents of an input buffer,
// in chunks, so that a buffer of gigabytes never needs a host copy of its
// own size. The stream depends only on the argument's position and element
// type: chunking does not change the data.
//
// Floating-point elements are uniform in [0, 1): finite, no denormals to
// slow the kernel down, no NaNs to propagate. Integers are uniform in
// [0, 256) ([0, 128) for i8): safe as indices into small tables (the
// histogram kernels' bins) and as byte data.
type Filler struct {
	elem Elem
	rng  *rand.Rand
}

// NewFiller returns the filler of argument a.
func NewFiller(a Arg) *Filler {
	return &Filler{elem: a.Elem, rng: rand.New(rand.NewPCG(fillSeed, uint64(a.Index)))}
}

// Fill writes the next len(dst)/size elements into dst, little-endian.
// len(dst) must be a multiple of the element size.
func (f *Filler) Fill(dst []byte) {
	le := binary.LittleEndian
	size := f.elem.Size()
	for off := 0; off+size <= len(dst); off += size {
		b := dst[off : off+size]
		switch f.elem {
		case F32:
			le.PutUint32(b, math.Float32bits(f.rng.Float32()))
		case F64:
			le.PutUint64(b, math.Float64bits(f.rng.Float64()))
		case F16, BF16:
			le.PutUint16(b, halfOrBF16Bits(f.elem, f.rng.Float32()))
		case I8:
			b[0] = byte(f.rng.IntN(128))
		case U8:
			b[0] = byte(f.rng.IntN(256))
		case I16, U16:
			le.PutUint16(b, uint16(f.rng.IntN(256)))
		case I32, U32:
			le.PutUint32(b, uint32(f.rng.IntN(256)))
		case I64, U64:
			le.PutUint64(b, uint64(f.rng.IntN(256)))
		}
	}
}

func halfOrBF16Bits(e Elem, v float32) uint16 {
	if e == BF16 {
		return BFloat16Bits(v)
	}
	return HalfBits(v)
}

// HalfBits converts v to IEEE 754 binary16 (CUDA's __half), rounding to
// nearest even; out-of-range values become infinities.
func HalfBits(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	e := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if e == 0xff { // infinity or NaN (kept quiet)
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	exp := e - 127 + 15
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 {
		// Subnormal half: value = m × 2^-24.
		if exp < -10 {
			return sign
		}
		full := mant | 0x800000
		shift := uint32(14 - exp)
		m := full >> shift
		rem := full & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && m&1 == 1) {
			m++ // may carry into the smallest normal: still the right encoding
		}
		return sign | uint16(m)
	}
	h := sign | uint16(exp)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent rounds up correctly, to infinity at the top
	}
	return h
}

// BFloat16Bits converts v to bfloat16 (CUDA's __nv_bfloat16): the upper
// half of the float32, rounded to nearest even.
func BFloat16Bits(v float32) uint16 {
	b := math.Float32bits(v)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a (quiet) NaN
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
