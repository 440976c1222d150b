package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exampleProfiles = "../plan/testdata/example-profiles.json"

func TestPlanInputsAndErrors(t *testing.T) {
	profiles, err := os.ReadFile(exampleProfiles)
	require.NoError(t, err)
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"file", "", []string{"plan", exampleProfiles}, 0, "plan: stm on", ""},
		{"stdin", string(profiles), []string{"plan", "-"}, 0, "plan: stm on", ""},
		{"stdin JSON", string(profiles), []string{"plan", "--json", "-"}, 0, `"format": "slatec-plan/1"`, ""},
		{"missing file", "", []string{"plan", "nope.json"}, 1, "", "slatec: error: nope.json: no such file or directory\n"},
		{"syntax error is positional", "{\n  \"format\": }", []string{"plan", "-"}, 1, "", "<stdin>:2:"},
		{"field problems name the file", `{"format": "slatec-profile/1", "device": {"name": "x", "sms": 0, "peak_bw_gbs": 1, "mem_bytes": 1}, "kernels": []}`,
			[]string{"plan", "-"}, 1, "", "<stdin>: error: device.sms: must be between 1 and 4096, got 0\n"},
		{"gantt to stdout is refused", "", []string{"plan", "--gantt", "-", exampleProfiles}, 2, "", "slatec: error: --gantt - would mix"},
		{"gantt in a missing directory", "", []string{"plan", "--gantt", "no/such/g.svg", exampleProfiles}, 1, "", "slatec: error: no/such/g.svg: directory no/such does not exist\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == exampleProfiles {
					abs, _ := filepath.Abs(filepath.Join(cwdAtStart, exampleProfiles))
					args[i] = abs
				}
			}
			code, out, errs := slatec(t, tt.stdin, args...)
			assert.Equal(t, tt.wantCode, code, errs)
			assert.Contains(t, out, tt.wantOut)
			if tt.wantErr == "" {
				assert.Empty(t, errs)
			} else {
				assert.Contains(t, errs, tt.wantErr)
			}
			entries, _ := os.ReadDir(".")
			assert.Empty(t, entries, "nothing written")
		})
	}
}

var cwdAtStart, _ = os.Getwd()

// The text and the JSON number phases alike, from 1.
func TestPlanPhasesNumberedAlike(t *testing.T) {
	for _, algo := range []string{"stm", "slate", "li", "cumas"} {
		t.Run(algo, func(t *testing.T) {
			code, text, errs := slatec(t, "", "plan", "--algo", algo, exampleProfiles)
			require.Equal(t, 0, code, errs)
			code, js, errs := slatec(t, "", "plan", "--algo", algo, "--json", exampleProfiles)
			require.Equal(t, 0, code, errs)
			var doc struct {
				Phases []struct {
					Phase int `json:"phase"`
					Index int `json:"index"`
				} `json:"phases"`
			}
			require.NoError(t, json.Unmarshal([]byte(js), &doc))
			var textNums []int
			for _, m := range regexp.MustCompile(`(?m)^(\d+) `).FindAllStringSubmatch(text, -1) {
				n, _ := strconv.Atoi(m[1])
				textNums = append(textNums, n)
			}
			var jsonNums []int
			for _, p := range doc.Phases {
				assert.Equal(t, p.Index+1, p.Phase)
				jsonNums = append(jsonNums, p.Phase)
			}
			require.NotEmpty(t, jsonNums)
			assert.Equal(t, jsonNums, textNums)
			assert.Equal(t, 1, jsonNums[0])
		})
	}
}

// Issue 11: the plan prints its makespan next to the sequential one from
// the same profiles, with the gain, ANTT and STP of both, and per kernel
// its end against its best solo time; the JSON has the same numbers.
func TestPlanMakespanBesideSequential(t *testing.T) {
	var doc map[string]any
	data, err := os.ReadFile(exampleProfiles)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	var ks []any
	for _, k := range doc["kernels"].([]any) {
		if n := k.(map[string]any)["name"]; n == "triad_f4" || n == "fma_loop" {
			ks = append(ks, k)
		}
	}
	doc["kernels"] = ks
	reduced, err := json.Marshal(doc)
	require.NoError(t, err)
	for _, algo := range []string{"stm", "optimal", "slate", "li", "cumas"} {
		t.Run(algo, func(t *testing.T) {
			code, text, errs := slatec(t, string(reduced), "plan", "--algo", algo, "-")
			require.Equal(t, 0, code, errs)
			code, js, errs := slatec(t, string(reduced), "plan", "--algo", algo, "--json", "-")
			require.Equal(t, 0, code, errs)
			var p struct {
				PredictedMs  float64 `json:"predicted_ms"`
				SequentialMs float64 `json:"sequential_ms"`
				Gain         float64 `json:"gain"`
				Metrics      struct {
					MakespanMs float64 `json:"makespan_ms"`
					ANTT, STP  float64
				} `json:"metrics"`
				Sequential struct {
					MakespanMs float64 `json:"makespan_ms"`
					ANTT, STP  float64
				} `json:"sequential_metrics"`
				Kernels []struct {
					Name   string  `json:"name"`
					EndMs  float64 `json:"end_ms"`
					SoloMs float64 `json:"solo_ms"`
					NTT    float64 `json:"ntt"`
				} `json:"kernels"`
			}
			require.NoError(t, json.Unmarshal([]byte(js), &p))
			assert.Equal(t, p.SequentialMs, p.Sequential.MakespanMs)
			assert.LessOrEqual(t, p.PredictedMs, p.SequentialMs)
			assert.GreaterOrEqual(t, p.Metrics.ANTT, 1.0)
			assert.LessOrEqual(t, p.Metrics.STP, 2.0)
			require.Len(t, p.Kernels, 2)
			for _, k := range p.Kernels {
				assert.GreaterOrEqual(t, k.EndMs, k.SoloMs, k.Name)
				assert.GreaterOrEqual(t, k.NTT, 1.0, k.Name)
			}
			assert.Contains(t, text, "predicted makespan "+strconv.FormatFloat(p.PredictedMs, 'f', 4, 64)+
				" ms, sequential "+strconv.FormatFloat(p.SequentialMs, 'f', 4, 64)+" ms (same profiles), gain "+
				strconv.FormatFloat(100*p.Gain, 'f', 1, 64)+"%")
			assert.Contains(t, text, "ANTT "+strconv.FormatFloat(p.Metrics.ANTT, 'f', 3, 64)+" (sequential "+
				strconv.FormatFloat(p.Sequential.ANTT, 'f', 3, 64)+")")
			best := "1.9687" // R[48]
			if algo == "li" || algo == "cumas" {
				best = "5.0686" // with its 2.1 + 1.0 ms of copies
			}
			assert.Regexp(t, `(?m)^  triad_f4 +[0-9.]+ +`+regexp.QuoteMeta(best)+` +48 +[0-9.]+$`, text)
		})
	}
}

// With profiles that hold beside measurements (slatec bench --partners),
// the slate plan says what the model made of each.
func TestPlanSlateBesideNotes(t *testing.T) {
	code, out, errs := slatec(t, "", "plan", "../bench/results/raw/partners-h200/profiles-beside.json", "--algo", "slate")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "note: chase beside histogram: measured 1.884x on 33 SMs beside 99, its stream curve says 3.082x at 1614 GB/s; its loaded factor beside histogram is scaled by 0.42 on split SMs")
	assert.Contains(t, out, "note: fma_chain beside chase: measured 0.999x on 33 SMs beside 99, its stream curve says 1.000x at 155 GB/s; its stream curve is flat there: not scaled")
	code, out, _ = slatec(t, "", "plan", "../bench/results/corun-profiles.json", "--algo", "slate")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, " beside ")
}
