package corun

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/profile"
)

// Every kernel of the catalogue is a kernel of kernels/corun.cu with a Go
// launcher in kernels_slate.go, and its --args spec for slatec profile
// matches the kernel's parameters (the same check slatec profile makes).
func TestCatalogueMatchesKernels(t *testing.T) {
	gen, err := os.ReadFile("kernels_slate.go")
	require.NoError(t, err)
	perClass := map[Class]int{}
	names := map[string]bool{}
	for _, k := range Catalogue() {
		t.Run(k.Name, func(t *testing.T) {
			assert.False(t, names[k.Name], "duplicate name")
			names[k.Name] = true
			perClass[k.Class]++
			assert.True(t, regexp.MustCompile(`(?m)^__global__ void .*\b`+k.Name+`\(`).Match(KernelSource), "not a kernel of kernels/corun.cu")
			assert.Contains(t, string(gen), `"`+k.Name+`__slate"`, "no launcher in kernels_slate.go (go generate ./corun)")

			prep, _, err := profile.Prepare("corun.cu", KernelSource, k.Name, nil)
			require.NoError(t, err)
			args, err := profile.ParseArgs(k.ProfileArgs())
			require.NoError(t, err, k.ProfileArgs())
			_, err = profile.CheckArgs(args, prep.Layout)
			require.NoError(t, err, k.ProfileArgs())
			assert.Len(t, k.Args, len(prep.Layout.Params))

			assert.Positive(t, k.Grid.Count())
			assert.Positive(t, k.BytesPerBlock())
			assert.Positive(t, k.Model.SoloMs)
			var bytes int64
			for _, b := range k.Buffers {
				bytes += b.Bytes()
			}
			assert.Less(t, bytes, int64(40<<30), "buffers must fit an 80 GB GPU with a co-runner")
		})
	}
	for _, c := range []Class{Memory, Compute, Latency, SharedMm} {
		assert.GreaterOrEqual(t, perClass[c], 2, "class %s needs two kernels", c)
	}
}

func TestProfileCommand(t *testing.T) {
	k := Catalogue()[0]
	cmd := k.ProfileCommand(".gpu/slatec", "out/profiles.json", "step:4")
	assert.Equal(t, ".gpu/slatec profile corun/kernels/corun.cu --kernel triad_f4 --grid 262144 --block 256 --bytes-per-block 12288 "+
		"--args 'out:f32:268435456,buf:f32:268435456,buf:f32:268435456,f32:2.5,i32:67108864' --sms step:4 -o out/profiles.json --append", cmd)
	for _, k := range Catalogue() {
		if k.Grid.Y > 1 {
			assert.Contains(t, k.ProfileCommand("s", "p", "all"), "--grid "+dimText(k.Grid))
			assert.Regexp(t, `^[0-9]+x[0-9]+$`, dimText(k.Grid))
		}
	}
}

func TestWorkloads(t *testing.T) {
	ws := Workloads(Catalogue())
	seen := map[string]bool{}
	var pairs, triples, comp, nonComp int
	for _, w := range ws {
		assert.False(t, seen[w.Name], "duplicate workload %s", w.Name)
		seen[w.Name] = true
		assert.Equal(t, names(w.Kernels), w.Name)
		switch len(w.Kernels) {
		case 2:
			pairs++
			assert.Equal(t, complementary(w.Kernels[0].Class, w.Kernels[1].Class), w.Complementary, w.Name)
		case 3:
			triples++
		default:
			t.Errorf("%s has %d kernels", w.Name, len(w.Kernels))
		}
		if w.Complementary {
			comp++
		} else {
			nonComp++
		}
	}
	// 5 complementary class pairs x 2 x 2 kernels, compute+shared, and one
	// same-class pair per class; three triples.
	assert.Equal(t, 20+1+4, pairs)
	assert.Equal(t, 3, triples)
	assert.Equal(t, 22, comp)
	assert.Equal(t, 6, nonComp)
	// Every complementary pair of kernels is there.
	ks := Catalogue()
	for i, a := range ks {
		for _, b := range ks[i+1:] {
			if complementary(a.Class, b.Class) {
				assert.True(t, seen[a.Name+"+"+b.Name], "%s+%s missing", a.Name, b.Name)
			}
		}
	}
}

func TestSelectWorkloads(t *testing.T) {
	all := Workloads(Catalogue())
	tests := []struct {
		names   []string
		quick   bool
		want    []string
		wantErr string
	}{
		{names: nil, quick: true, want: QuickWorkloads},
		{names: []string{"fma_chain+triad_f4"}, want: []string{"triad_f4+fma_chain"}},
		{names: []string{"triad_f4+fma_chain", " fma_chain + triad_f4 "}, want: []string{"triad_f4+fma_chain"}},
		{names: []string{"triples"}, want: []string{"triad_f4+fma_chain+chase", "triad_f4+gemm_tiled+chase", "triad_f4+scale_f4+fma_chain"}},
		{names: []string{"triad_f4+nope"}, wantErr: `no workload "triad_f4+nope"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.names, ","), func(t *testing.T) {
			got, err := SelectWorkloads(all, tc.names, tc.quick)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var gotNames []string
			for _, w := range got {
				gotNames = append(gotNames, w.Name)
			}
			assert.Equal(t, tc.want, gotNames)
		})
	}
	got, err := SelectWorkloads(all, nil, false)
	require.NoError(t, err)
	assert.Len(t, got, len(all))
	got, err = SelectWorkloads(all, []string{"complementary"}, false)
	require.NoError(t, err)
	for _, w := range got {
		assert.True(t, w.Complementary, w.Name)
	}
}

func TestParseModes(t *testing.T) {
	tests := []struct {
		in      []string
		want    []Mode
		wantErr string
	}{
		{in: nil, want: []Mode{Sequential}},
		{in: []string{"oracle", "static"}, want: []Mode{Sequential, Static, Oracle}},
		{in: []string{"all"}, want: AllModes},
		{in: []string{"fast"}, wantErr: `unknown mode "fast"`},
	}
	for _, tc := range tests {
		got, err := ParseModes(tc.in)
		if tc.wantErr != "" {
			assert.ErrorContains(t, err, tc.wantErr)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}
