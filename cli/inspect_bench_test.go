package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/diag"
	"github.com/slatec/slatec/transform"
)

// hugeKernelFile writes a file of n small reduction kernels (about 480
// bytes each: 12 000 make 5.7 MB) and returns its path.
func hugeKernelFile(tb testing.TB, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `__global__ void kern_%d(const float* __restrict__ in, float* __restrict__ out, int n, float alpha) {
    __shared__ float tile[256];
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = gid < n ? in[gid] * alpha : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
}
`, i)
	}
	p := filepath.Join(tb.TempDir(), "huge.cu")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkInspectHuge measures slatec inspect end to end (read, analyse,
// report) on a 5.7 MB file of 12 000 kernels, in MB/s, and its memory as
// multiples of the input's size: alloc-x, the bytes allocated per run
// (B/op over the input), and peak-heap-x, the most heap the run held at
// once (live and not yet collected objects, sampled every millisecond, over
// what the heap held before), which is what the process's RSS follows:
//
//	go test ./cli -run '^$' -bench InspectHuge -benchmem -cpuprofile cpu.out -memprofile mem.out
func BenchmarkInspectHuge(b *testing.B) {
	for _, asJSON := range []bool{false, true} {
		b.Run(fmt.Sprintf("json=%v", asJSON), func(b *testing.B) {
			p := hugeKernelFile(b, 12000)
			st, _ := os.Stat(p)
			size := float64(st.Size())
			b.SetBytes(st.Size())
			args := []string{"inspect", p}
			if asJSON {
				args = []string{"inspect", "--json", p}
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := samplePeakHeap()
			b.ResetTimer()
			for range b.N {
				root := newRootCmd()
				root.SetOut(io.Discard)
				root.SetErr(io.Discard)
				if code := run(root, args); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.StopTimer()
			peak := stop()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "alloc-x")
			b.ReportMetric((float64(peak)-float64(before.HeapAlloc))/size, "peak-heap-x")
		})
	}
}

// samplePeakHeap samples the bytes of heap objects (live, or dead and not
// yet swept) every millisecond until the returned function is called,
// which returns the largest sample.
func samplePeakHeap() func() uint64 {
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	read := func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > peak {
			peak = v
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak
	}
}

// The streamed JSON is byte for byte what encoding/json writes for the
// whole document, also with a file that fails and one with no kernels.
func TestInspectJSONStreamMatchesEncoder(t *testing.T) {
	files, err := filepath.Glob("../testdata/kernels/*.cu")
	require.NoError(t, err)
	dir := t.TempDir()
	files = append(files[:4], write(t, dir, "bad.cu", "__global__ void k() {}\n\x00"), write(t, dir, "host.cpp", "int main() {}\n"))
	want := inspectReport{Format: "slatec-inspect/1"}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		var a *transform.Analysis
		if off, why := binaryAt(src); off >= 0 {
			d := diag.NewLines(src).At(f, off, diag.Error, "binary file (%s), not CUDA source", why)
			d.Source = ""
			err = d
		} else {
			a, err = transform.Load(f, src, nil)
		}
		if err != nil {
			var d diag.Diagnostic
			require.True(t, errors.As(err, &d))
			want.Files = append(want.Files, fileReport{File: d.File, Kernels: []kernelReport{}, Launches: []launchReport{}, Diagnostics: []diag.Diagnostic{d}})
			continue
		}
		want.Files = append(want.Files, buildFileReport(a, nil))
	}
	var b strings.Builder
	require.NoError(t, writeJSON(&b, want))
	code, out, _ := slatec(t, "", append([]string{"inspect", "--json"}, files...)...)
	assert.Equal(t, 1, code, "bad.cu fails")
	assert.Equal(t, b.String(), out)
}

// inspect goes on past a file it cannot read, and says so.
func TestInspectMissingFileAmongOthers(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "k.cu", goodKernel)
	code, out, errs := slatec(t, "", "inspect", good, filepath.Join(dir, "nope.cu"), good)
	assert.Equal(t, 1, code)
	assert.Equal(t, 2, strings.Count(out, "kernel scale"))
	assert.Equal(t, "slatec: error: "+filepath.Join(dir, "nope.cu")+": no such file or directory\n", errs)
	code, out, _ = slatec(t, "", "inspect", "--json", good, filepath.Join(dir, "nope.cu"))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `"message": "no such file or directory"`)
	assert.True(t, strings.HasSuffix(out, "  ]\n}\n"), "a complete document")
}
