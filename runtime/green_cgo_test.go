//go:build cgo

package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// shim.h's slate_devres has CUdevResource's size and the SM member's
// offset, checked against cuda.h when the project-local CUDA headers and a
// C compiler are there (make cuda-tools).
func TestDevResourceLayoutMatchesCudaH(t *testing.T) {
	inc := filepath.Join(os.Getenv(EnvCUDAPrefix), "nvidia", "cu13", "include")
	if os.Getenv(EnvCUDAPrefix) == "" {
		inc = filepath.Join("..", ".cuda", "nvidia", "cu13", "include")
	}
	if _, err := os.Stat(filepath.Join(inc, "cuda.h")); err != nil {
		t.Skipf("no cuda.h under %s (make cuda-tools)", inc)
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	// The two headers cannot share a translation unit (shim.h declares the
	// handle types itself), so each is pinned to the same numbers.
	check := func(name, include, typ string) {
		src := filepath.Join(t.TempDir(), name+".c")
		prog := "#include <stddef.h>\n#include " + include + "\n" +
			"_Static_assert(sizeof(" + typ + ") == 144, \"size\");\n" +
			"_Static_assert(offsetof(" + typ + ", sm.smCount) == 96, \"smCount\");\n" +
			"_Static_assert(offsetof(" + typ + ", sm.minSmPartitionSize) == 100, \"minSmPartitionSize\");\n" +
			"_Static_assert(offsetof(" + typ + ", sm.smCoscheduledAlignment) == 104, \"smCoscheduledAlignment\");\n"
		if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(cc, "-fsyntax-only", "-I", inc, "-I", ".", src).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", typ, err, out)
		}
	}
	check("cuda", "<cuda.h>", "CUdevResource")
	check("shim", "\"shim.h\"", "slate_devres")

	// The cluster launch's configuration (slate_launch_cluster).
	launch := func(name, include, attr, cfg, dim string) {
		src := filepath.Join(t.TempDir(), name+".c")
		prog := "#include <stddef.h>\n#include " + include + "\n" +
			"_Static_assert(sizeof(" + attr + ") == 72, \"attr size\");\n" +
			"_Static_assert(offsetof(" + attr + ", value." + dim + ".x) == 8, \"clusterDim\");\n" +
			"_Static_assert(sizeof(" + cfg + ") == 56, \"config size\");\n" +
			"_Static_assert(offsetof(" + cfg + ", sharedMemBytes) == 24, \"sharedMemBytes\");\n" +
			"_Static_assert(offsetof(" + cfg + ", hStream) == 32, \"hStream\");\n" +
			"_Static_assert(offsetof(" + cfg + ", attrs) == 40, \"attrs\");\n" +
			"_Static_assert(offsetof(" + cfg + ", numAttrs) == 48, \"numAttrs\");\n"
		if name == "cuda" {
			prog += "_Static_assert(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION == 4, \"cluster attribute id\");\n"
		}
		if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(cc, "-fsyntax-only", "-I", inc, "-I", ".", src).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", cfg, err, out)
		}
	}
	launch("cuda", "<cuda.h>", "CUlaunchAttribute", "CUlaunchConfig", "clusterDim")
	launch("shim", "\"shim.h\"", "slate_launch_attr", "slate_launch_config", "clusterDim")
}

func TestGreenWithoutDriver(t *testing.T) {
	if GreenSupported() {
		t.Skip("a driver with green contexts is loaded")
	}
	var d Device
	d.info.SMs = 132
	if _, err := d.NewGreenSet([]int{8}); err == nil {
		t.Error("NewGreenSet without a driver succeeded")
	}
}
