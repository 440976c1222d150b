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

// validateServe checks a serve.json document against serve.schema.json and
// that its rows make sense together: one row per workload and mode, and
// every workload measured under mps and serve also has its sequential row.
func validateServe(t *testing.T, data []byte) {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("serve.schema.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(inst))
	var doc struct {
		Rows []struct {
			Workload      string  `json:"workload"`
			Complementary bool    `json:"complementary"`
			Mode          string  `json:"mode"`
			MakespanMs    float64 `json:"makespan_ms"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	seen := map[string]bool{}
	comp := map[string]bool{}
	modes := map[string]map[string]bool{}
	for _, r := range doc.Rows {
		key := r.Workload + "/" + r.Mode
		assert.False(t, seen[key], "two rows for %s", key)
		seen[key] = true
		if c, ok := comp[r.Workload]; ok {
			assert.Equal(t, c, r.Complementary, "%s: complementary differs between its rows", r.Workload)
		}
		comp[r.Workload] = r.Complementary
		if modes[r.Workload] == nil {
			modes[r.Workload] = map[string]bool{}
		}
		modes[r.Workload][r.Mode] = true
	}
	for w, m := range modes {
		assert.True(t, m["sequential"], "%s has no sequential row", w)
	}
}

// serve.json (slatec serve across processes, issue 13), once a GPU session
// has written it with scripts/gpu-serve.sh.
func TestServeResults(t *testing.T) {
	data, err := os.ReadFile("serve.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no serve.json yet: scripts/gpu-serve.sh writes it on a GPU (bench/RESULTS.md, Sharing between processes)")
	}
	require.NoError(t, err)
	validateServe(t, data)
}

// The schema itself accepts the shape the script writes and rejects a
// mode it does not know.
func TestServeSchema(t *testing.T) {
	good := `{"device":"NVIDIA H100 80GB HBM3","commit":"abc123","rows":[
		{"workload":"saxpy+sgemm","complementary":true,"mode":"sequential","makespan_ms":12.5},
		{"workload":"saxpy+sgemm","complementary":true,"mode":"mps","makespan_ms":8.1},
		{"workload":"saxpy+sgemm","complementary":true,"mode":"serve","makespan_ms":7.9}],
		"resize_p99_us":310.5,"resize_moved":{"count":4,"push_to_ack_p99_us":737,"drain_p99_us":258,"drain_minus_task_p99_us":-42},"solo_overhead":0.004}`
	validateServe(t, []byte(good))
	// resize_moved is optional (files written before it); none moved: nulls.
	validateServe(t, []byte(strings.Replace(good, `"resize_moved":{"count":4,"push_to_ack_p99_us":737,"drain_p99_us":258,"drain_minus_task_p99_us":-42},`, ``, 1)))
	validateServe(t, []byte(strings.Replace(good, `"count":4,"push_to_ack_p99_us":737,"drain_p99_us":258,"drain_minus_task_p99_us":-42`, `"count":0,"push_to_ack_p99_us":null,"drain_p99_us":null,"drain_minus_task_p99_us":null`, 1)))
	sch, err := jsonschema.NewCompiler().Compile("serve.schema.json")
	require.NoError(t, err)
	for _, bad := range []string{
		strings.Replace(good, `"mode":"serve"`, `"mode":"green"`, 1),
		strings.Replace(good, `"makespan_ms":7.9`, `"makespan_ms":0`, 1),
		strings.Replace(good, `"resize_p99_us":310.5,`, ``, 1),
		strings.Replace(good, `"count":4,`, ``, 1),
		strings.Replace(good, `"count":4`, `"count":-1`, 1),
		strings.Replace(good, `"saxpy+sgemm","complementary":true,"mode":"mps"`, `"saxpy","complementary":true,"mode":"mps"`, 1),
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		require.NoError(t, err)
		assert.Error(t, sch.Validate(inst), bad)
	}
}
