package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/slatec/slatec/occupancy"
)

// workerReport compiles a transformed output with nvcc -Xptxas -v for
// sm_90 and prints, per kernel, its registers and static shared memory next
// to its worker's, and the blocks per SM of both at common block sizes: the
// check that the persistent form keeps the kernel's occupancy (a worker
// that needs more registers can lose a block per SM; --match-regs caps it).
func workerReport(w io.Writer, name string, output []byte, includes, macroArgs []string, matched bool) error {
	nvcc, why := findNVCC()
	if nvcc == "" {
		return fmt.Errorf("--report needs nvcc: %s", why)
	}
	tmp, err := os.MkdirTemp("", "slatec-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "out.cu")
	if err := os.WriteFile(src, output, 0o644); err != nil {
		return err
	}
	dirs := includes
	if name != "-" && name != "<stdin>" {
		dirs = append([]string{filepath.Dir(name)}, includes...) // the input's own includes
	}
	keyPath := "" // stdin: not cached (its temporary path never repeats)
	if name != "-" && name != "<stdin>" {
		keyPath = name
	}
	out, err := runPtxas(nvcc, reportArch, src, keyPath, tmp, dirs, macroArgs)
	if err != nil {
		return fmt.Errorf("--report: nvcc failed on the output of %s:\n%s", name, strings.ReplaceAll(err.Error(), src, name))
	}
	// The largest usage per name (template instances together).
	type usage struct {
		regs, smem, spill int
		template          bool
	}
	byName := map[string]*usage{}
	for _, u := range occupancy.ParsePtxas(out) {
		e := byName[u.Name]
		if e == nil {
			e = &usage{template: u.Template}
			byName[u.Name] = e
		}
		e.regs = max(e.regs, u.Registers)
		e.smem = max(e.smem, u.StaticShared)
		e.spill = max(e.spill, u.SpillStores)
	}
	var names []string
	for n := range byName {
		if !strings.HasSuffix(n, "__slate") && !strings.HasSuffix(n, "__slate_static") && byName[n+"__slate"] != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	sizes := []int{128, 256, 512, 1024}
	fmt.Fprintf(w, "%s: worker resources (%s, ptxas; blocks per SM with no dynamic shared memory)\n", name, reportArch)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "kernel\tregisters (static / queue worker)\tstatic shared\tspill bytes")
	for _, s := range sizes {
		fmt.Fprintf(tw, "\t%d thr", s)
	}
	fmt.Fprintln(tw, "\t")
	var losses []string
	for _, n := range names {
		// Blocks per SM are the static worker's (drop-in launches on all
		// SMs); the queue worker serves SM ranges and resizable jobs.
		k, qk := byName[n], byName[n+"__slate"]
		wk := byName[n+"__slate_static"]
		if wk == nil {
			wk = qk
		}
		label := n
		if k.template {
			label += " (largest instance)"
		}
		fmt.Fprintf(tw, "%s\t%d -> %d / %d\t%d -> %d\t%d", label, k.regs, wk.regs, qk.regs, k.smem, wk.smem, max(wk.spill, qk.spill))
		for _, s := range sizes {
			a, _ := occupancy.SM90.Compute(occupancy.Kernel{Threads: s, Registers: k.regs, StaticShared: k.smem})
			b, _ := occupancy.SM90.Compute(occupancy.Kernel{Threads: s, Registers: wk.regs, StaticShared: wk.smem})
			mark := ""
			if b.BlocksPerSM < a.BlocksPerSM {
				mark = " !"
				losses = append(losses, fmt.Sprintf("%s at %d threads", n, s))
			}
			fmt.Fprintf(tw, "\t%d -> %d%s", a.BlocksPerSM, b.BlocksPerSM, mark)
		}
		fmt.Fprintln(tw, "\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(losses) > 0 && matched:
		// --match-regs dropped these caps (pruneRegCaps: held to their
		// kernels' registers, both workers spilled), or the kernel sets
		// its own __maxnreg__.
		fmt.Fprintf(w, "the worker keeps fewer blocks per SM than its kernel (!): %s; --match-regs %s left it uncapped (capped, both its workers spill; or the kernel sets its own __maxnreg__)\n",
			strings.Join(losses, ", "), reportArch)
	case len(losses) > 0:
		fmt.Fprintf(w, "the worker keeps fewer blocks per SM than its kernel (!): %s; transform with --match-regs %s to cap its registers\n",
			strings.Join(losses, ", "), reportArch)
	case len(names) > 0:
		fmt.Fprintln(w, "every worker keeps its kernel's blocks per SM at these block sizes")
	}
	return nil
}
