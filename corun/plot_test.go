package corun

import (
	"encoding/xml"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validSVG parses s as XML with an <svg> root.
func validSVG(t *testing.T, s []byte) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(s)))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root)
}

func TestPlots(t *testing.T) {
	d := fakeDocument(t)
	plots, err := Plots(d)
	require.NoError(t, err)
	var names []string
	for n := range plots {
		names = append(names, n)
	}
	sort.Strings(names)
	// Quick workloads: four pairs with sweeps, one triple (no sweep plot).
	assert.Equal(t, []string{"gain.svg", "gantt.svg", "sweep-triad_f4-chase.svg", "sweep-triad_f4-fma_chain.svg",
		"sweep-triad_f4-histogram.svg", "sweep-triad_f4-scale_f4.svg"}, names)
	for n, svg := range plots {
		t.Run(n, func(t *testing.T) { validSVG(t, svg) })
	}
	gain := string(plots["gain.svg"])
	assert.Contains(t, gain, "Gain over sequential per workload")
	assert.Contains(t, gain, "fake GPU, commit 0123abc")
	for _, m := range []string{"streams", "static", "scheduler", "stm", "oracle", "green"} {
		assert.Contains(t, gain, ">"+m+"<", "legend entry %s", m)
	}
	assert.NotContains(t, gain, ">mps<", "mps did not run on the fake")

	sw := string(plots["sweep-triad_f4-fma_chain.svg"])
	assert.Contains(t, sw, "triad_f4+fma_chain: SM-split sweep")
	assert.Contains(t, sw, "oracle best 2:14: 2.812 ms")
	assert.Contains(t, sw, "chosen by the planner (stm) 2:14")
	assert.Contains(t, sw, "sequential (3.5 ms)")
	assert.Contains(t, sw, "streams (3 ms)")

	g := string(plots["gantt.svg"])
	assert.Contains(t, g, "Scheduler run of triad_f4+fma_chain", "the first complementary run that co-ran")
	assert.Contains(t, g, ">triad_f4<")
	assert.Contains(t, g, ">fma_chain<")
}

func TestPlotErrors(t *testing.T) {
	d := &Document{Device: "x", SMs: 16, Rows: []Row{{Workload: "a+b", Mode: Sequential, MakespanMs: 1}}}
	_, err := GainSVG(d)
	assert.ErrorContains(t, err, "only sequential ran")
	_, err = SweepSVG(d, "a+b")
	assert.ErrorContains(t, err, "has no sweep")
	_, err = GanttSVG(d, "a+b")
	assert.ErrorContains(t, err, "no scheduler run")
	d.Sweeps = []Sweep{{Workload: "a+b", Mode: Static, Best: "1:15", Points: []SweepEntry{{Split: "1:2:13", MakespanMs: 1}}}}
	_, err = SweepSVG(d, "a+b")
	assert.ErrorContains(t, err, "does not have 2 parts")
}
