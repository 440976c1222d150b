#!/usr/bin/env bash
# probe-gpu.sh: slatec bench --probe on the GPU machine (which split costs
# the workers what, beside which partner; see `slatec bench --help`), and
# optionally the solo probes of NCU_PROBES under Nsight Compute.
#
#   run(command: "OUT=$OUT/p ./scripts/probe-gpu.sh", carry: [".work/g1"])
#
# Environment:
#   SLATEC      the binary (default .work/g1/slatec, else .gpu/slatec)
#   PROBES      space-separated specs (kernels@split)
#   PROFILES    profiles to seed the workers' task sizes
#               (default bench/results/corun-profiles.json)
#   REPS        repetitions per configuration (default 10)
#   NCU_PROBES  one-kernel specs (k@SMs) to run once under ncu: worker
#               and native launches, sections as scripts/ncu-diag.sh
#   OUT         where probe.txt, probe.json and ncu-*.csv go
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
S=${SLATEC:-.work/g1/slatec}
[ -x "$S" ] || S=.gpu/slatec
OUT=${OUT:-$PWD/.work/probe-out}
mkdir -p "$OUT"
PROFILES=${PROFILES:-bench/results/corun-profiles.json}
PROBES=${PROBES:-triad_f4+gemm_tiled@40:92 triad_f4+gemm_tiled@16:116 scale_f4+gemm_tiled@48:84 triad_f4+histogram@40:92 chase+histogram@32:100 scale_f4+dep_chain@48:84 fma_chain@132 histogram@132 gemm_tiled@132}
args=()
for p in $PROBES; do args+=(--probe "$p"); done
t0=$(date +%s)
"$S" bench --profiles "$PROFILES" "${args[@]}" --reps "${REPS:-10}" --json --out "$OUT" >"$OUT/probe.txt" 2>"$OUT/probe.err"
rc=$?
cat "$OUT/probe.txt"
tail -5 "$OUT/probe.err"
echo "## probes: exit $rc in $(( $(date +%s) - t0 )) s"
for p in ${NCU_PROBES:-}; do
  k=${p%@*}
  timeout 300 ncu --kernel-name "regex:^${k}(__slate)?\$" --section LaunchStats --section Occupancy --section WarpStateStats \
    --section InstructionStats --section SpeedOfLight --section SchedulerStats \
    --metrics sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_active.min --csv --print-units base \
    "$S" bench --profiles "$PROFILES" --probe "$p" --reps 1 --probe-at 0 >"$OUT/ncu-$k.csv" 2>"$OUT/ncu-$k.err"
  echo "## ncu $p: exit $? ($(grep -c '"' "$OUT/ncu-$k.csv") csv lines)"
done
exit "$rc"
