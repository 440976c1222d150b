package plan

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	all, err := ReadProfileFile(os.Getenv("ZZ_PROFILES"))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ZZ_STRIP") != "" {
		for i := range all.Kernels {
			all.Kernels[i].DRAMPressure = nil
		}
	}
	out := map[string]map[int]float64{}
	names := []string{}
	for _, k := range all.Kernels {
		names = append(names, k.Name)
	}
	for _, a := range names {
		for _, c := range names {
			if a == c {
				continue
			}
			ps := subset(t, all, a, c)
			mdl, _ := NewModel(ps)
			m := map[int]float64{}
			for mm := 1; mm < mdl.M; mm++ {
				l, _ := mdl.simulateSlate([]int{0, 1}, []int{mm, mdl.M - mm})
				m[mm] = l
			}
			out[strings.Join([]string{a, c}, "+")] = m
		}
	}
	b, _ := json.Marshal(out)
	os.WriteFile(os.Getenv("ZZ_OUT"), b, 0o644)
}
