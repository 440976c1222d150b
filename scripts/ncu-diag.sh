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
set -uo pipefail
cd "$(dirname "$0")/.."
export SLATE_MODE=${SLATE_MODE:-persistent}
W=${W:-/tmp/slatec-gpu}
OUT=${OUT:-$PWD/.work/gpu-out}
D=$OUT/ncu-diag
mkdir -p "$D"
for n in ${FILES:-wmma_gemm_f64 sgemm_tiled black_scholes}; do
    for v in orig env; do
        (cd /tmp && HARNESS_REPS=4 timeout 300 ncu --metrics gpu__time_duration.sum --csv --print-units base \
            "$W/$n.$v" >"$D/$n.$v.launches.csv" 2>/dev/null)
        [ "${SECTIONS:-1}" = 0 ] && continue
        (cd /tmp && timeout 300 ncu --launch-count 1 --section LaunchStats --section Occupancy --section WarpStateStats \
            --section InstructionStats --section SpeedOfLight --section SchedulerStats --csv --print-units base \
            "$W/$n.$v" >"$D/$n.$v.sections.csv" 2>/dev/null)
    done
done
python3 - "$D" >"$OUT/ncu-diag.txt" <<'PY'
import csv, glob, os, sys
d = sys.argv[1]
def rows(path):
    with open(path) as f:
        return list(csv.DictReader([l for l in f if l.startswith('"')]))
for p in sorted(glob.glob(os.path.join(d, "*.orig.launches.csv"))):
    n = os.path.basename(p)[:-len(".orig.launches.csv")]
    for v in ("orig", "env"):
        p_ = os.path.join(d, f"{n}.{v}.launches.csv")
        if not os.path.exists(p_):
            continue
        r = rows(p_)
        ts = [f'{r_["Kernel Name"][:24]}:{float(r_["Metric Value"].replace(",", ""))/1e3:.1f}' for r_ in r if r_.get("Metric Name") == "gpu__time_duration.sum"]
        print(f"{n} {v} launches(us): {' '.join(ts)}")
    keep = ("Duration", "Registers Per Thread", "Grid Size", "Block Size", "Waves Per SM", "Achieved Occupancy",
            "Theoretical Occupancy", "Executed Instructions", "Issued Instructions", "Warp Cycles Per Issued Instruction",
            "No Eligible", "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput", "Elapsed Cycles", "SM Active Cycles",
            "Block Limit Registers", "Dynamic Shared Memory Per Block", "Static Shared Memory Per Block")
    vals = {}
    for v in ("orig", "env"):
        p_ = os.path.join(d, f"{n}.{v}.sections.csv")
        for r_ in (rows(p_) if os.path.exists(p_) else []):
            if r_.get("Metric Name") in keep:
                vals.setdefault(r_["Metric Name"], {})[v] = r_["Metric Value"]
    for k in keep:
        if k in vals:
            print(f"  {k:38s} {vals[k].get('orig', '-'):>14s} {vals[k].get('env', '-'):>14s}")
PY
cat "$OUT/ncu-diag.txt"
