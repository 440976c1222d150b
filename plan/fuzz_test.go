package plan

import (
	"os"
	"testing"
)

// FuzzParseProfile checks that no input makes the parser or the planners
// panic: malformed or invalid profiles must come back as errors.
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte(minimalProfile))
	if b, err := os.ReadFile("testdata/example-profiles.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"format":"slatec-profile/1","device":{"name":"x","sms":2,"peak_bw_gbs":1,"mem_bytes":1},"kernels":[{"name":"a","blocks":3,"threads_per_block":1,"registers":0,"shared_bytes":0,"global_bytes":0,"r_ms":[1,null],"bw_gbs":{"2":0}}]}`))
	f.Add([]byte(`{"r_ms": {"1": 1e999}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseProfile(data)
		if err != nil {
			return
		}
		if ps.Device.SMs > 16 || len(ps.Kernels) > 6 {
			return // keep each input cheap
		}
		for _, k := range ps.Kernels {
			if k.Blocks > 1<<12 {
				return
			}
		}
		_, _ = PlanSTM(ps, STMOptions{Eval: EvalExact})
		_, _ = PlanOptimal(ps, OptimalOptions{})
		_, _ = PlanSlate(ps)
		_, _ = PlanLi(ps, LiOptions{})
		_, _ = PlanCuMAS(ps, CuMASOptions{})
		if _, err := ps.Marshal(); err != nil {
			t.Fatalf("valid profile does not marshal: %v", err)
		}
	})
}
