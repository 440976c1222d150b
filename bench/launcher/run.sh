#!/usr/bin/env bash
# Launcher microbenchmark on the GPU machine: bench/launcher/launch_overhead.cu
# built natively and after `slatec transform` (the carried .gpu/slatec), run
# alternately: native, slatec with SLATE_MODE=persistent (the worker, forced)
# and slatec with the default policy (auto: native unless asked to share).
# Writes $OUT/launcher.txt (a table) and $OUT/launcher.json.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/.work/gpu-out}
W=${W:-/tmp/slatec-launcher}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
SLATEC=${SLATEC:-.gpu/slatec}
COUNT=${COUNT:-100000}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT" "$W"
src=bench/launcher/launch_overhead.cu
"$NVCC" -std=c++17 -O2 -arch="$ARCH" -o "$W/native" "$src" || exit 1
"$SLATEC" transform -o "$W/slate.cu" "$src" || exit 1
"$NVCC" -std=c++17 -O2 -arch="$ARCH" -o "$W/slate" "$W/slate.cu" || exit 1
: >"$W/raw.txt"
for r in $(seq 1 "$ROUNDS"); do
    "$W/native" "$COUNT" | sed "s/^/native $r /" >>"$W/raw.txt"
    SLATE_MODE=persistent "$W/slate" "$COUNT" | sed "s/^/persistent $r /" >>"$W/raw.txt"
    "$W/slate" "$COUNT" | sed "s/^/auto $r /" >>"$W/raw.txt"
done
cp "$W/raw.txt" "$OUT/launcher-raw.txt"
# What makes the transformed binary's first launch slower even in auto mode (the
# native kernel, launched from a module that also holds the workers): the same
# program with unused kernels added to its module -- six empty ones (more
# functions), and six with large bodies (more code). PROBE first_launch lines.
pad=$W/padded.cu
cp "$src" "$pad.small.cu"
cp "$src" "$pad.big.cu"
for i in 1 2 3 4 5 6; do
    echo "__global__ void slate_pad_small_$i(int* p) { if (p) p[$i] = $i; }" >>"$pad.small.cu"
    {
        echo "__global__ void slate_pad_big_$i(float* p, int n) {"
        echo "    float a = p[threadIdx.x], b = p[threadIdx.x + 1];"
        echo "    #pragma unroll 1"
        echo "    for (int k = 0; k < n; ++k) {"
        for j in $(seq 1 60); do echo "        a = a * b + $j.0f; b = b * a - $j.5f; if (a > b) p[k + $j] = a;"; done
        echo "    }"
        echo "    p[threadIdx.x] = a + b;"
        echo "}"
    } >>"$pad.big.cu"
done
for v in small big; do
    "$NVCC" -std=c++17 -O2 -arch="$ARCH" -o "$W/pad_$v" "$pad.$v.cu" || exit 1
done
ls -l "$W/native" "$W/slate" "$W/pad_small" "$W/pad_big" >>"$OUT/first-use-probe.txt" 2>&1
for r in $(seq 1 "$ROUNDS"); do
    for v in native pad_small pad_big slate; do
        "$W/$v" 4 | grep first_launch | sed "s/^/PAD $v $r /" >>"$OUT/first-use-pad.txt"
    done
done
# First use, call by call (three processes).
"$NVCC" -std=c++17 -O2 -arch="$ARCH" -o "$W/probe" bench/launcher/first_use_probe.cu &&
    for r in 1 2 3; do "$W/probe"; done >>"$OUT/first-use-probe.txt"
python3 - "$W/raw.txt" "$OUT" <<'PY'
import json, re, statistics, subprocess, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) (\d+) LAUNCH (\S+) cpu_us=([\d.]+) gpu_us=([\d.]+)", line)
    if m:
        v, _, case, cpu, gpu = m.groups()
        rows.setdefault((case, v), []).append((float(cpu), float(gpu)))
cases = sorted({c for c, _ in rows}, key=lambda c: (c != "first_launch", c))
out = []
lines = ["%-18s %-4s %10s %12s %10s %8s %12s" % ("case", "", "native", "persistent", "auto", "ratio", "diff us")]
for case in cases:
    for i, metric in enumerate(("cpu_us", "gpu_us")):
        med = {v: statistics.median(x[i] for x in rows.get((case, v), [(0, 0)])) for v in ("native", "persistent", "auto")}
        ratio = med["persistent"] / med["native"] if med["native"] else 0
        lines.append("%-18s %-4s %10.3f %12.3f %10.3f %8.3f %12.3f" % (case, metric[:3], med["native"], med["persistent"], med["auto"], ratio, med["persistent"] - med["native"]))
        out.append({"case": case + "/" + metric, "native": med["native"], "slatec": med["persistent"], "slatec_auto": med["auto"]})
dev = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()
json.dump({"device": dev[0] if dev else "", "metric": "microseconds per launch (cpu_us: host enqueue time; gpu_us: GPU time between events), median of rounds; slatec = SLATE_MODE=persistent, slatec_auto = default policy", "rows": out}, open(sys.argv[2] + "/launcher.json", "w"), indent=1)
open(sys.argv[2] + "/launcher.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
