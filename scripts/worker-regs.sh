#!/usr/bin/env bash
# Registers and static shared memory of every worker next to its kernel,
# from ptxas -v (no GPU needed): the CPU-side check that the persistent form
# keeps the native kernel's occupancy. Usage: scripts/worker-regs.sh [golden files...]
set -uo pipefail
cd "$(dirname "$0")/.."
nvcc=${NVCC:-.cuda/nvidia/cu13/bin/nvcc}
arch=${ARCH:-sm_90}
files=${*:-$(ls golden/*.cu)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
one() {
  f=$1; o="$tmp/$(basename "$f").log"
  "$nvcc" -std=c++17 -O2 -arch="$arch" -Itestdata/include -Itestdata/kernels -Igolden -Xptxas -v -c "$f" -o /dev/null >"$o" 2>&1
  c++filt <"$o" | python3 -c '
import re, sys
ents, cur = [], None
for line in sys.stdin:
    m = re.search(r"Compiling entry function .(.+). for .sm_", line)
    if m:
        cur = {"sym": m.group(1)}; ents.append(cur); continue
    if cur is None: continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", line)
    if m: cur["spill"] = int(m.group(2))
    m = re.search(r"Used (\d+) registers", line)
    if m:
        cur["regs"] = int(m.group(1))
        s = re.search(r"(\d+) bytes smem", line); cur["smem"] = int(s.group(1)) if s else 0
        cur = None
def key(sym):  # the name with the worker suffix and its extra parameters removed
    return re.sub(r"\(.*", "", sym.replace("__slate_static", "").replace("__slate", ""))
nat = {key(e["sym"]): e for e in ents if "__slate" not in e["sym"]}
for e in ents:
    if "__slate" not in e["sym"] or "regs" not in e: continue
    n = nat.get(key(e["sym"]))
    if n is None: continue
    kind = "static" if "__slate_static" in e["sym"] else "queue"
    print("%-28s %-44s %-6s regs %4d -> %4d  smem %6d -> %6d  spill %d" % (sys.argv[1], key(e["sym"])[:44], kind, n["regs"], e["regs"], n["smem"], e["smem"], e.get("spill", 0)))
' "$(basename "$f")"
}
export -f one; export nvcc arch tmp
printf '%s\n' $files | xargs -P "${JOBS:-2}" -I{} bash -c 'one {}'
