package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const minimalProfile = `{
  "format": "slatec-profile/1",
  "device": {"name": "toy", "sms": 4, "peak_bw_gbs": 100, "mem_bytes": 1000000},
  "kernels": [
    {"name": "a", "blocks": 8, "threads_per_block": 128, "registers": 32, "shared_bytes": 0,
     "global_bytes": 1000, "r_ms": {"1": 8, "4": 2}, "bw_gbs": [10, null, null, 40]}
  ]
}`

func TestParseMinimalAndInterpolate(t *testing.T) {
	ps, err := ParseProfile([]byte(minimalProfile))
	require.NoError(t, err)
	k := &ps.Kernels[0]
	tests := []struct {
		m    int
		r, b float64
	}{
		{1, 8, 10}, {2, 6, 20}, {3, 4, 30}, {4, 2, 40},
	}
	for _, tc := range tests {
		assert.InDelta(t, tc.r, k.R(tc.m), 1e-12, "R[%d]", tc.m)
		assert.InDelta(t, tc.b, k.B(tc.m), 1e-12, "B[%d]", tc.m)
	}
}

func TestInterpolationOutsideRange(t *testing.T) {
	k := Kernel{RMs: Samples{{4, 3}, {8, 2}}, BWGBs: Samples{{4, 40}, {8, 60}}}
	assert.InDelta(t, 12.0, k.R(1), 1e-12, "perfect scaling below the first sample")
	assert.InDelta(t, 6.0, k.R(2), 1e-12)
	assert.InDelta(t, 2.0, k.R(16), 1e-12, "flat above the last sample")
	assert.InDelta(t, 10.0, k.B(1), 1e-12, "proportional below")
	assert.InDelta(t, 60.0, k.B(100), 1e-12, "flat above")
	assert.InDelta(t, 2.5, k.R(6), 1e-12, "linear between")
}

func TestProfileErrorsNameTheField(t *testing.T) {
	base := func(edit func(string) string) string { return edit(minimalProfile) }
	tests := []struct {
		name, input, want string
	}{
		{"bad format", base(func(s string) string { return strings.Replace(s, "slatec-profile/1", "slatec-profile/9", 1) }), `format: unsupported format "slatec-profile/9"`},
		{"missing format", `{"device": {}, "kernels": []}`, "format: missing"},
		{"unknown kernel field", base(func(s string) string { return strings.Replace(s, `"blocks": 8`, `"blocks": 8, "blokcs": 3`, 1) }), `kernels[0].blokcs: unknown field`},
		{"unknown top field", base(func(s string) string { return strings.Replace(s, `"format"`, `"extra": 1, "format"`, 1) }), `extra: unknown field`},
		{"wrong type", base(func(s string) string { return strings.Replace(s, `"blocks": 8`, `"blocks": "8"`, 1) }), `kernels[0].blocks: expected an integer, got JSON string`},
		{"zero blocks", base(func(s string) string { return strings.Replace(s, `"blocks": 8`, `"blocks": 0`, 1) }), `kernels[0].blocks: must be between 1`},
		{"m too large", base(func(s string) string { return strings.Replace(s, `"4": 2`, `"5": 2`, 1) }), `kernels[0].r_ms["5"]: SM count 5 is outside 1..device.sms (4)`},
		{"negative latency", base(func(s string) string { return strings.Replace(s, `"1": 8`, `"1": -8`, 1) }), `kernels[0].r_ms["1"]: latency must be a positive number`},
		{"bad sample key", base(func(s string) string { return strings.Replace(s, `"1": 8`, `"one": 8`, 1) }), `kernels[0].r_ms: key "one" is not a decimal SM count`},
		{"duplicate sample", base(func(s string) string { return strings.Replace(s, `"1": 8`, `"1": 8, "1": 9`, 1) }), `kernels[0].r_ms: SM count 1 given twice`},
		{"no samples", base(func(s string) string { return strings.Replace(s, `{"1": 8, "4": 2}`, `{}`, 1) }), `kernels[0].r_ms: at least one measurement is required`},
		{"bad class", base(func(s string) string { return strings.Replace(s, `"blocks": 8`, `"blocks": 8, "class": "X_Y"`, 1) }), `kernels[0].class: unknown class "X_Y"`},
		{"no sms", base(func(s string) string { return strings.Replace(s, `"sms": 4`, `"sms": 0`, 1) }), `device.sms: must be between 1 and 4096, got 0`},
		{"syntax", `{"format": "slatec-profile/1",` + "\n" + ` "device": }`, "line 2, column"},
		{"not an object", `[1,2]`, "expected"},
		{"duplicate names", strings.Replace(minimalProfile, `"kernels": [`, `"kernels": [{"name": "a", "blocks": 1, "threads_per_block": 1, "registers": 0, "shared_bytes": 0, "global_bytes": 0, "r_ms": {"1": 1}, "bw_gbs": {"1": 1}},`, 1), `kernels[1].name: "a" is also the name of kernels[0]`},
		{"transfer unknown", base(func(s string) string {
			return strings.Replace(s, `"blocks": 8`, `"blocks": 8, "transfer": {"in_ms": 1, "out": 2}`, 1)
		}), `kernels[0].transfer.out: unknown field`},
		{"transfer negative", base(func(s string) string {
			return strings.Replace(s, `"blocks": 8`, `"blocks": 8, "transfer": {"in_ms": -1, "out_ms": 2}`, 1)
		}), `kernels[0].transfer.in_ms: must be a non-negative number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.input))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestProfileRoundTripDeterministic(t *testing.T) {
	ps, err := ParseProfile([]byte(minimalProfile))
	require.NoError(t, err)
	a, err := ps.Marshal()
	require.NoError(t, err)
	ps2, err := ParseProfile(a)
	require.NoError(t, err)
	b, err := ps2.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.Contains(t, string(a), "\"bw_gbs\": {\n        \"1\": 10,\n        \"4\": 40\n      }", "array form is written as the object form")
	assert.Equal(t, ps, ps2)
}

func TestSamplesOrderNumeric(t *testing.T) {
	b, err := json.Marshal(Samples{{2, 1}, {10, 2}, {100, 3}})
	require.NoError(t, err)
	assert.Equal(t, `{"2":1,"10":2,"100":3}`, string(b))
}

func TestOccupancy(t *testing.T) {
	ps := &ProfileSet{Device: Device{MaxBlocksPerSM: 32, MaxThreadsPerSM: 2048, RegistersPerSM: 65536, SharedBytesPerSM: 228 << 10}}
	tests := []struct {
		k    Kernel
		want int
	}{
		{Kernel{ThreadsPerBlock: 256, Registers: 32}, 8},        // threads
		{Kernel{ThreadsPerBlock: 256, Registers: 128}, 2},       // registers
		{Kernel{ThreadsPerBlock: 64, SharedBytes: 48 << 10}, 4}, // shared
		{Kernel{ThreadsPerBlock: 32}, 32},                       // block limit
		{Kernel{ThreadsPerBlock: 256, BlocksPerSM: 3}, 3},       // explicit wins
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ps.Occupancy(&tc.k))
	}
	assert.Equal(t, 1, (&ProfileSet{}).Occupancy(&Kernel{ThreadsPerBlock: 64}), "no limits known")
}

// TestSchemaAcceptsExamples validates the example profiles against
// profile.schema.json with santhosh-tekuri/jsonschema (draft 2020-12), and
// checks that the schema rejects what Validate rejects structurally.
func TestSchemaAcceptsExamples(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("profile.schema.json")
	require.NoError(t, err)
	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	docs := map[string]string{"minimal": minimalProfile,
		"beside": strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 8, "beside": [{"partner": "b", "sms": 1, "partner_sms": 3, "slowdown": 1.25}]`, 1)}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs[f] = string(b)
	}
	for name, doc := range docs {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		require.NoError(t, err, name)
		assert.NoError(t, sch.Validate(inst), name)
		_, err = ParseProfile([]byte(doc))
		assert.NoError(t, err, name)
	}
	bad := []string{
		strings.Replace(minimalProfile, `"format": "slatec-profile/1",`, ``, 1),
		strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 0`, 1),
		strings.Replace(minimalProfile, `"name": "a", `, ``, 1),
		strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 8, "class": "Q"`, 1),
		strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 8, "typo": 1`, 1),
		strings.Replace(minimalProfile, `"peak_bw_gbs": 100, `, ``, 1),
		strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 8, "beside": [{"partner": "b", "sms": 1, "partner_sms": 3, "slowdown": 0}]`, 1),
		strings.Replace(minimalProfile, `"blocks": 8`, `"blocks": 8, "beside": [{"partner": "", "sms": 1, "partner_sms": 3, "slowdown": 1}]`, 1),
	}
	for i, doc := range bad {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		require.NoError(t, err)
		assert.Error(t, sch.Validate(inst), "bad[%d] must fail the schema", i)
		_, err = ParseProfile([]byte(doc))
		assert.Error(t, err, "bad[%d] must fail ParseProfile", i)
	}
}
