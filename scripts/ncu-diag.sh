#!/usr/bin/env bash
# Why a worker's kernel time differs from its kernel's under Nsight Compute
# (issue 10): for the programs in $FILES (builds of scripts/gpu-diff.sh in
# $W), original and transformed (SLATE_MODE=persistent):
#   1. every launch's gpu__time_duration with HARNESS_REPS=4 (a warm-up, then
#      calibration and timed runs): is the gap only the first launch's?
#   2. the first launch's launch statistics, occupancy, warp states and
#      instruction counts (ncu sections), one CSV per program and build.
# Writes $OUT/ncu-diag/*.csv and $OUT/ncu-diag.txt. SECTIONS=0 skips step 2;
# the environment reaches both builds (CUDA_MODULE_LOADING=EAGER, or
# SLATE_PRELOAD=0 and SLATE_MODE=auto for the transformed one).
# VARIANTS adds runs of the transformed build under other settings, each
# NAME:VAR=VALUE[,VAR=VALUE] (e.g. "q1:SLATE_ITERS=1" times the queue worker
# with one logical block per task). Step 1 also records how evenly the SMs
# were busy (sm__cycles_active max/avg): a static worker's tail shows there.
# SKIP=N profiles step 2's launch after N others (with HARNESS_REPS=4 the
# program's warm launches, not its cold first one); a FILES entry NAME@RE
# lists, counts and profiles only kernels whose names match RE (ncu's
# regex:), in both steps.
set -uo pipefail
cd "$(dirname "$0")/.."
export SLATE_MODE=${SLATE_MODE:-persistent}
W=${W:-/tmp/slatec-gpu}
OUT=${OUT:-$PWD/.work/gpu-out}
D=$OUT/ncu-diag
mkdir -p "$D"
METRICS=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_active.min
VARIANTS=${VARIANTS:-}
for entry in ${FILES:-wmma_gemm_f64 sgemm_tiled black_scholes}; do
    n=${entry%%@*} filter=()
    [ "$n" != "$entry" ] && filter=(--kernel-name "regex:${entry#*@}")
    for v in orig env $VARIANTS; do
        name=${v%%:*} bin=$v extra=()
        if [ "$name" != "$v" ]; then
            bin=env
            IFS=, read -ra extra <<<"${v#*:}"
        fi
        (cd /tmp && env "${extra[@]}" HARNESS_REPS=4 timeout 300 ncu "${filter[@]}" --metrics $METRICS --csv --print-units base \
            "$W/$n.$bin" >"$D/$n.$name.launches.csv" 2>/dev/null)
        [ "${SECTIONS:-1}" = 0 ] && continue
        (cd /tmp && env "${extra[@]}" HARNESS_REPS=4 timeout 300 ncu "${filter[@]}" --launch-skip "${SKIP:-0}" --launch-count 1 --section LaunchStats --section Occupancy --section WarpStateStats \
            --section InstructionStats --section SpeedOfLight --section SchedulerStats --csv --print-units base \
            "$W/$n.$bin" >"$D/$n.$name.sections.csv" 2>/dev/null)
    done
done
python3 - "$D" $VARIANTS >"$OUT/ncu-diag.txt" <<'PY'
import csv, glob, os, sys
d = sys.argv[1]
variants = ["orig", "env"] + [v.split(":", 1)[0] for v in sys.argv[2:]]
def rows(path):
    with open(path) as f:
        return list(csv.DictReader([l for l in f if l.startswith('"')]))
for p in sorted(glob.glob(os.path.join(d, "*.orig.launches.csv"))):
    n = os.path.basename(p)[:-len(".orig.launches.csv")]
    for v in variants:
        p_ = os.path.join(d, f"{n}.{v}.launches.csv")
        if not os.path.exists(p_):
            continue
        per = {}  # launch ID -> {metric: value}
        for r_ in rows(p_):
            per.setdefault(r_["ID"], {"name": r_["Kernel Name"]})[r_["Metric Name"]] = float(r_["Metric Value"].replace(",", ""))
        ts = []
        for m in per.values():
            t = f'{m["name"][:24]}:{m.get("gpu__time_duration.sum", 0)/1e3:.1f}'
            if m.get("sm__cycles_active.avg"):
                # busiest SM against the average: 1.00 is a perfectly even load
                t += f'(sm max/avg {m.get("sm__cycles_active.max", 0)/m["sm__cycles_active.avg"]:.2f})'
            ts.append(t)
        print(f"{n} {v} launches(us): {' '.join(ts)}")
    keep = ("Duration", "Registers Per Thread", "Grid Size", "Block Size", "Waves Per SM", "Achieved Occupancy",
            "Theoretical Occupancy", "Executed Instructions", "Issued Instructions", "Warp Cycles Per Issued Instruction",
            "No Eligible", "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput", "Elapsed Cycles", "SM Active Cycles",
            "Block Limit Registers", "Dynamic Shared Memory Per Block", "Static Shared Memory Per Block")
    vals = {}
    for v in variants:
        p_ = os.path.join(d, f"{n}.{v}.sections.csv")
        for r_ in (rows(p_) if os.path.exists(p_) else []):
            if r_.get("Metric Name") in keep:
                vals.setdefault(r_["Metric Name"], {})[v] = r_["Metric Value"]
    for k in keep:
        if k in vals:
            print(f"  {k:38s} " + " ".join(f"{vals[k].get(v, '-'):>14s}" for v in variants))
PY
cat "$OUT/ncu-diag.txt"
