package corun

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/runtime"
)

func TestParseProbe(t *testing.T) {
	for _, tc := range []struct {
		spec, err string
		kernels   int
		split     []int
	}{
		{spec: "triad_f4+gemm_tiled@40:92", kernels: 2, split: []int{40, 92}},
		{spec: "triad_f4+gemm_tiled+chase@40:80:12", kernels: 3, split: []int{40, 80, 12}},
		{spec: "fma_chain@132", kernels: 1, split: []int{132}},
		{spec: "triad_f4+gemm_tiled", err: "want kernels@split"},
		{spec: "triad_f4+nope@40:92", err: `no kernel "nope"`},
		{spec: "triad_f4+gemm_tiled@40", err: "2 kernels but 1 split parts"},
		{spec: "triad_f4+gemm_tiled@40:90", err: "covers 130 SMs, the device has 132"},
		{spec: "triad_f4+gemm_tiled@0:132", err: `"0" is not a positive SM count`},
		{spec: "triad_f4+gemm_tiled+chase+histogram@33:33:33:33", err: "at most 3 kernels"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := ParseProbe(tc.spec, 132)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, p.Kernels, tc.kernels)
			assert.Equal(t, tc.split, p.Split)
			assert.Equal(t, tc.spec, p.String())
		})
	}
}

func TestProbeConfigs(t *testing.T) {
	assert.Equal(t, []string{"w", "n"}, probeConfigs(1))
	assert.Equal(t, []string{"ww", "22", "gg", "w-", "g-", "-w", "-g"}, probeConfigs(2))
	c3 := probeConfigs(3)
	assert.Len(t, c3, 3+6)
	assert.Contains(t, c3, "--g")
}

func TestWorkerHistogram(t *testing.T) {
	n := make([]uint32, runtime.RankSMs)
	for sm := 40; sm < 132; sm++ {
		n[sm] = 8
	}
	n[50], n[51] = 7, 6
	n[10] = 3 // not among sms: not counted
	var sms []int
	for sm := 40; sm < 132; sm++ {
		sms = append(sms, sm)
	}
	assert.Equal(t, "6x1 7x1 8x90", workerHistogram(n, sms))
	assert.Equal(t, "3x1", workerHistogram(n, []int{10}))
	assert.Equal(t, "uncounted", workerHistogram(make([]uint32, runtime.RankSMs), sms))
}

func TestFormatProbe(t *testing.T) {
	ks := []*Kernel{{Name: "triad_f4"}, {Name: "gemm_tiled"}}
	rows := []ProbeRow{
		{Spec: "triad_f4+gemm_tiled@40:92", Config: "ww", EndsMs: []float64{1.2, 3.4}, MakespanMs: 3.4, Workers: []string{"8x40", "7x92"}},
		{Spec: "triad_f4+gemm_tiled@40:92", Config: "gg", EndsMs: []float64{1.1, 2.9}, MakespanMs: 2.9},
		{Spec: "triad_f4+gemm_tiled@40:92", Config: "-w", EndsMs: []float64{0, 3.0}, MakespanMs: 3.0, Workers: []string{"", "8x92"}},
	}
	out := FormatProbe(rows, ks)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	assert.Contains(t, lines[2], "1.172") // 3.4 / 2.9
	assert.Contains(t, lines[2], "gemm_tiled: 7x92")
	assert.Contains(t, lines[3], "1.000")
	assert.Regexp(t, `^-w\s+-\s+3\.0000\s+3\.0000\s+-\s+gemm_tiled: 8x92$`, lines[4])
}

// A probe needs the CUDA device: the fake says the mode is unavailable.
func TestProbeNeedsCUDA(t *testing.T) {
	b := &Bench{Dev: NewFake(FakeOptions{SMs: 132, GreenGranularity: 2})}
	p, err := ParseProbe("triad_f4+gemm_tiled@40:92", 132)
	require.NoError(t, err)
	_, err = b.Probe(t.Context(), p, 1, 0)
	assert.ErrorIs(t, err, ErrUnavailable)
}
