package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/slatec/slatec/occupancy"
)

// registerCaps compiles each .cu input with nvcc -Xptxas -v for each
// architecture and returns, per architecture, the registers each kernel
// uses (the largest over its template instances): transform.Options.RegCaps.
// Headers are not compiled on their own; their kernels get no cap. The
// -I directories and -D/-U macros are the build's.
func registerCaps(paths []string, archs, includes, macroArgs []string) (map[string]map[string]int, error) {
	nvcc, why := findNVCC()
	if nvcc == "" {
		return nil, fmt.Errorf("--match-regs needs nvcc: %s", why)
	}
	tmp, err := os.MkdirTemp("", "slatec-regs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	caps := map[string]map[string]int{}
	for _, arch := range archs {
		if !strings.HasPrefix(arch, "sm_") {
			return nil, usagef("--match-regs takes real architectures such as sm_90, not %q", arch)
		}
		caps[arch] = map[string]int{}
		for _, p := range paths {
			if p == "-" || !strings.HasSuffix(p, ".cu") {
				continue
			}
			args := []string{"-std=c++17", "-arch=" + arch, "-Xptxas", "-v", "-c", "-o", filepath.Join(tmp, "k.o")}
			for _, d := range includes {
				args = append(args, "-I", d)
			}
			args = append(append(args, macroArgs...), p)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			out, err := exec.CommandContext(ctx, nvcc, args...).CombinedOutput()
			cancel()
			if err != nil {
				msg := strings.TrimSpace(string(out))
				if lines := strings.Split(msg, "\n"); len(lines) > 12 {
					msg = strings.Join(lines[:12], "\n") + "\n..."
				}
				return nil, fmt.Errorf("--match-regs: %s does not compile for %s (%s):\n%s", p, arch, filepath.Base(nvcc), msg)
			}
			for _, u := range occupancy.ParsePtxas(string(out)) {
				if u.Registers > caps[arch][u.Name] {
					caps[arch][u.Name] = u.Registers
				}
			}
		}
	}
	return caps, nil
}
