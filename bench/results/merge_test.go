// Package results holds the benchmark results of GPU sessions; its tests
// check that they keep their documented shape.
package results

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type mergeRow struct {
	Case          string  `json:"case"`
	Complementary bool    `json:"complementary"`
	Mode          string  `json:"mode"`
	Split         string  `json:"split"`
	Ms            float64 `json:"ms"`
	Planned       bool    `json:"planned"`
	Kernel        string  `json:"kernel"`
}

// merge.json conforms to merge.schema.json, and its rows make sense
// together: baselines have no split, merged runs do, a sweep split has one
// entry per kernel of its case, and every case has its sequential baseline.
func TestMergeResults(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("merge.schema.json")
	require.NoError(t, err)
	f, err := os.Open("merge.json")
	require.NoError(t, err)
	defer f.Close()
	inst, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))

	data, err := os.ReadFile("merge.json")
	require.NoError(t, err)
	var doc struct {
		Device string     `json:"device"`
		Rows   []mergeRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	seq := map[string]bool{}
	arity := map[string]int{}
	for _, r := range doc.Rows {
		baseline := r.Mode == "sequential" || r.Mode == "streams" || r.Mode == "solo"
		assert.Equal(t, baseline, r.Split == "-", "%+v", r)
		assert.Equal(t, r.Mode == "solo", r.Kernel != "", "%+v", r)
		if r.Mode == "sequential" {
			seq[r.Case] = true
		}
		if !baseline && r.Split != "default" {
			n := len(strings.Split(r.Split, ":"))
			if a, ok := arity[r.Case]; ok {
				assert.Equal(t, a, n, "%+v: splits of one case name the same kernels", r)
			}
			arity[r.Case] = n
		}
	}
	for _, r := range doc.Rows {
		assert.True(t, seq[r.Case], "case %s has no sequential row", r.Case)
	}
}

// The schema rejects what it should.
func TestMergeSchemaRejects(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("merge.schema.json")
	require.NoError(t, err)
	for _, bad := range []string{
		`{"device": "x", "commit": "7b8729b", "date": "2026-11-23", "rows": []}`,
		`{"device": "x", "commit": "7b8729b", "date": "2026-11-23", "rows": [{"case": "a", "complementary": false, "mode": "fast", "split": "-", "ms": 1, "planned": false}]}`,
		`{"device": "x", "commit": "7b8729b", "date": "2026-11-23", "rows": [{"case": "a", "complementary": false, "mode": "split", "split": "97", "ms": 1, "planned": false}]}`,
		`{"device": "x", "commit": "7b8729b", "date": "2026-11-23", "rows": [{"case": "a", "complementary": false, "mode": "sequential", "split": "-", "ms": 0, "planned": false}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		require.NoError(t, err)
		assert.Error(t, sch.Validate(inst), bad)
	}
}
