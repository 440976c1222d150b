package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slatec/slatec/templates"
)

// The drop-in launcher's SLATE_SM_ORDER=gpc (templates/sm_order.h, C++)
// must order the SMs as this runtime does from the same cluster records,
// so that a range means the same SMs to a Go program and a transformed one
// sharing a GPU: random GPC layouts and records, both orders and place
// tables compared.
func TestSMOrderHeaderAgreesWithTheRuntime(t *testing.T) {
	cc := ""
	for _, c := range []string{os.Getenv("CXX"), "g++", "clang++", "c++"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		t.Skip("no C++ compiler ($CXX, g++, clang++, c++): sm_order.h is not tested")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sm_order.h"), []byte(templates.SMOrderHeader()), 0o644))
	// The driver reads "sms cluster n" and n SM ids; prints the order, then
	// the place table (RankSMs bytes).
	driver := `#include "sm_order.h"
#include <cstdio>
int main() {
    int sms, cluster; long long n;
    while (std::scanf("%d %d %lld", &sms, &cluster, &n) == 3) {
        std::vector<unsigned int> ids(n);
        for (long long i = 0; i < n; ++i)
            if (std::scanf("%u", &ids[i]) != 1) return 1;
        std::vector<int> o = slate_sm_order::order_of(sms, ids.data(), n, cluster);
        for (size_t i = 0; i < o.size(); ++i) std::printf("%d ", o[i]);
        std::printf("\n");
        unsigned char t[` + strconv.Itoa(RankSMs) + `];
        slate_sm_order::place_table(o, t, sizeof t);
        for (size_t i = 0; i < sizeof t; ++i) std::printf("%d ", t[i]);
        std::printf("\n");
    }
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.cc"), []byte(driver), 0o644))
	bin := filepath.Join(dir, "driver")
	out, err := exec.Command(cc, "-std=c++11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"+dir, filepath.Join(dir, "driver.cc"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)

	rng := rand.New(rand.NewPCG(7, 13))
	var in bytes.Buffer
	type tc struct {
		sms      int
		clusters [][]uint32
	}
	var cases []tc
	for range 200 {
		sms := 1 + rng.IntN(200)
		// GPCs: a random partition of the SMs, interleaved as %smid does.
		gpc := make([]int, sms)
		ngpc := 1 + rng.IntN(12)
		for s := range gpc {
			gpc[s] = (s / 2) % ngpc
			if rng.IntN(10) == 0 {
				gpc[s] = rng.IntN(ngpc)
			}
		}
		const cluster = 8
		var ids []uint32
		var clusters [][]uint32
		for range rng.IntN(3 * sms) {
			g := rng.IntN(ngpc)
			var members []int
			for s, x := range gpc {
				if x == g {
					members = append(members, s)
				}
			}
			c := make([]uint32, cluster)
			for i := range c {
				switch {
				case len(members) == 0 || rng.IntN(40) == 0:
					c[i] = uint32(sms + rng.IntN(5)) // not an SM of the device
				default:
					c[i] = uint32(members[rng.IntN(len(members))])
				}
			}
			clusters = append(clusters, c)
			ids = append(ids, c...)
		}
		cases = append(cases, tc{sms, clusters})
		fmt.Fprintf(&in, "%d %d %d", sms, cluster, len(ids))
		for _, id := range ids {
			fmt.Fprintf(&in, " %d", id)
		}
		in.WriteString("\n")
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	got, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	require.Len(t, lines, 2*len(cases))
	for i, c := range cases {
		order := orderOf(smGroupsFromClusters(c.sms, c.clusters))
		table := placeTable(order)
		want := strings.TrimSpace(strings.Trim(fmt.Sprint(order), "[]"))
		wantTable := strings.Trim(fmt.Sprint(table[:]), "[]")
		if strings.TrimSpace(lines[2*i]) != want {
			t.Fatalf("case %d (%d SMs): C++ order\n%s\nGo order\n%s", i, c.sms, lines[2*i], want)
		}
		if strings.TrimSpace(lines[2*i+1]) != wantTable {
			t.Fatalf("case %d (%d SMs): C++ place table differs from the runtime's", i, c.sms)
		}
	}
}
