package runtime

// The parts of green-context support that need no cgo: errors, the
// granularity rule, and native kernels' parameter frames.

import (
	"errors"
	"fmt"
)

// ErrNoGreen is returned when the driver has no green contexts (CUDA
// before 12.4, or a build without cgo).
var ErrNoGreen = errors.New("runtime: the CUDA driver has no green contexts (cuGreenCtxCreate needs CUDA >= 12.4)")

// GreenInfo is the device's SM resource as green contexts partition it.
type GreenInfo struct {
	SMs          int
	MinPartition int // smallest partition, in SMs
	Alignment    int // partitions come in multiples of this many SMs
}

// fill supplies what drivers before CUDA 13 do not report: cuda.h's
// guideline per compute capability (9.0+: at least 8 SMs, multiples of 8;
// 8.x: at least 4, multiples of 2; older: at least 2, multiples of 2).
func (g *GreenInfo) fill(major int) {
	minp, align := 2, 2
	switch {
	case major >= 9:
		minp, align = 8, 8
	case major == 8:
		minp = 4
	}
	if g.MinPartition <= 0 {
		g.MinPartition = minp
	}
	if g.Alignment <= 0 {
		g.Alignment = align
	}
}

// Step is the partition step a sweep of green splits uses: the smallest
// multiple of the alignment that is at least the minimum partition.
func (g GreenInfo) Step() int {
	a := max(g.Alignment, 1)
	return (max(g.MinPartition, 1) + a - 1) / a * a
}

// nativeFrame lays out a kernel's own parameters from offset 0 (no worker
// prefix), by the C rules.
func nativeFrame(l ParamLayout) (frame, error) {
	var f frame
	off := 0
	for i, p := range l.Params {
		if p.Size <= 0 || p.Align <= 0 || p.Align&(p.Align-1) != 0 {
			return frame{}, fmt.Errorf("runtime: parameter %d (%s %s): size %d, alignment %d: a native launch needs both known", i, p.CType, p.Name, p.Size, p.Align)
		}
		off = alignUp(off, p.Align)
		f.slots = append(f.slots, slot{off, p.Size})
		off += p.Size
	}
	f.size = alignUp(max(off, 8), 8)
	return f, nil
}

// marshalNative packs args into a buffer laid out as f (from nativeFrame).
func (f *frame) marshalNative(l ParamLayout, args []any) ([]byte, error) {
	if len(args) != len(l.Params) {
		return nil, fmt.Errorf("runtime: got %d arguments, the kernel takes %d", len(args), len(l.Params))
	}
	words := make([]uint64, f.size/8)
	buf := reflectBytes(words)
	for i, a := range args {
		s := f.slots[i]
		b, err := argBytes(i, l.Params[i], s.size, a)
		if err != nil {
			return nil, err
		}
		copy(buf[s.off:s.off+s.size], b)
	}
	return buf, nil
}
