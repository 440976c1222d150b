package results

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type corunRow struct {
	Workload    string   `json:"workload"`
	Mode        string   `json:"mode"`
	MakespanMs  float64  `json:"makespan_ms"`
	PredictedMs *float64 `json:"predicted_ms"`
	Gain        float64  `json:"gain"`
	Kernels     []struct {
		Name string `json:"name"`
	} `json:"kernels"`
}

// corun.json (slatec bench, issue 11), once a GPU session has written it,
// conforms to corun.schema.json and its rows make sense together: every
// workload has its sequential row, gains are relative to it, predictions
// come only from modes that follow a plan, rows name the workload's
// kernels in order, and each sweep's best split is one it tried.
func TestCorunResults(t *testing.T) {
	data, err := os.ReadFile("corun.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no corun.json yet: scripts/corun-gpu.sh writes it on a GPU (bench/RESULTS.md, Co-running)")
	}
	require.NoError(t, err)
	sch, err := jsonschema.NewCompiler().Compile("corun.schema.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))

	var doc struct {
		Rows   []corunRow `json:"rows"`
		Sweeps []struct {
			Workload, Mode, Best string
			Points               []struct{ Split string }
		} `json:"sweeps"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	seq := map[string]float64{}
	for _, r := range doc.Rows {
		if r.Mode == "sequential" {
			seq[r.Workload] = r.MakespanMs
		}
	}
	planned := map[string]bool{"sequential": true, "stm": true, "scheduler": true}
	for _, r := range doc.Rows {
		s, ok := seq[r.Workload]
		if !assert.True(t, ok, "workload %s has no sequential row", r.Workload) {
			continue
		}
		assert.InDelta(t, 1-r.MakespanMs/s, r.Gain, 1e-3, "%s %s", r.Workload, r.Mode)
		if !planned[r.Mode] {
			assert.Nil(t, r.PredictedMs, "%s %s has no plan to predict it", r.Workload, r.Mode)
		}
		names := strings.Split(r.Workload, "+")
		if assert.Len(t, r.Kernels, len(names), "%s %s", r.Workload, r.Mode) {
			for i, k := range r.Kernels {
				assert.Equal(t, names[i], k.Name)
			}
		}
	}
	for _, s := range doc.Sweeps {
		found := false
		for _, p := range s.Points {
			found = found || p.Split == s.Best
		}
		assert.True(t, found, "%s %s: best split %s was not tried", s.Workload, s.Mode, s.Best)
	}
}
