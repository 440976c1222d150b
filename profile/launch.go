package profile

import (
	"fmt"
	"math"
	"strings"

	"github.com/slatec/slatec/runtime"
)

// ParseDim3 parses a grid or block shape: "4096", "64x64" or "64x64x2"
// (',' also separates), each component at least 1, with the K/M/G
// suffixes of --args ("64K" is 65536).
func ParseDim3(s string) (runtime.Dim3, error) {
	t := strings.TrimSpace(s)
	parts := strings.FieldsFunc(t, func(r rune) bool { return r == 'x' || r == 'X' || r == ',' || r == '*' })
	if len(parts) < 1 || len(parts) > 3 || strings.Count(t, "x")+strings.Count(t, "X")+strings.Count(t, ",")+strings.Count(t, "*") != len(parts)-1 {
		return runtime.Dim3{}, fmt.Errorf("%q is not a shape: use N, XxY or XxYxZ", s)
	}
	d := [3]uint32{1, 1, 1}
	for i, p := range parts {
		n, err := parseCount(p)
		if err != nil {
			return runtime.Dim3{}, fmt.Errorf("%q: %v", s, err)
		}
		if n < 1 || n > math.MaxUint32 {
			return runtime.Dim3{}, fmt.Errorf("%q: each dimension must be between 1 and %d", s, uint32(math.MaxUint32))
		}
		d[i] = uint32(n)
	}
	return runtime.Dim3{X: d[0], Y: d[1], Z: d[2]}, nil
}

// ParseSize parses a non-negative byte count with an optional K/M/G
// suffix (binary multiples), for --shmem and --bytes-per-block.
func ParseSize(s string) (int64, error) { return parseCount(s) }

// DefaultGrid is the grid the CLI uses when --grid is not given: one
// thread per element of the largest buffer, the launch of an elementwise
// kernel. Zero when there is no buffer.
func DefaultGrid(args []Arg, block runtime.Dim3) runtime.Dim3 {
	n := LargestBuffer(args)
	t := int64(block.Count())
	if n == 0 || t == 0 {
		return runtime.Dim3{}
	}
	blocks := (n + t - 1) / t
	if blocks > math.MaxUint32 {
		blocks = math.MaxUint32
	}
	return runtime.D1(uint32(blocks))
}
