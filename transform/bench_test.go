package transform

import (
	"os"
	"testing"
)

// BenchmarkTransform500 runs load (parse + analysis) and the persistent
// transform of a ~600-line file of test kernels, in process.
func BenchmarkTransform500(b *testing.B) {
	var src []byte
	for _, f := range []string{"sgemm_tiled", "scan_blelloch", "early_return_barrier_loop", "warp_intrinsics", "early_return_nested"} {
		s, err := os.ReadFile("../testdata/kernels/" + f + ".cu")
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, s...)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		a, err := Load("f500.cu", src, []string{"../testdata/include"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Persistent(a, Options{Version: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
