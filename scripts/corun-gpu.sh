#!/usr/bin/env bash
# The co-running benchmark of issue 11 on the GPU machine: profiles of the
# benchmark kernels with `slatec profile`, then `slatec bench` in every mode,
# the MPS mode under a private MPS control daemon.
#
#   here:  make gpu-build                     (.gpu/slatec, built with cgo)
#   there: run(command: "./scripts/corun-gpu.sh", carry: [".gpu"])
#
# Writes to $OUT: profiles.json (slatec-profile/1), corun.json
# (bench/results/corun.schema.json), gain.svg, sweep-*.svg, gantt.svg,
# report.txt (the bench's report), logs, and summary.txt, printed last.
# Environment: QUICK=1 (default) for --quick (about 5 minutes on an H100),
# QUICK=0 for the full run (at most 20 minutes); MPS=0 to skip starting the
# MPS daemon (the mps mode is then reported unavailable); PEAK_BW=GB/s when
# the driver does not report the memory clock; BENCH_ARGS for more flags
# (e.g. "--workloads complementary"; a full run split over device calls with
# --workloads is joined here with `slatec bench --combine A.json,B.json`).
# PROFILES=FILE takes the profiles from FILE instead of measuring them.
# FAKE=N checks the script without a GPU: no profiling, no MPS, slatec bench
# on its fake device of N SMs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/corun-gpu}
SLATEC=${SLATEC:-.gpu/slatec}
QUICK=${QUICK:-1}
MPS=${MPS:-1}
mkdir -p "$OUT"
S=$OUT/summary.txt
if [ ! -x "$SLATEC" ]; then
  echo "corun-gpu: $SLATEC not found: run 'make gpu-build' here and carry .gpu" | tee "$S"
  exit 2
fi
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
q=()
[ "$QUICK" = 1 ] && q=(--quick)
[ -n "${PEAK_BW:-}" ] && q+=(--peak-bw "$PEAK_BW")
{
  echo "# slatec co-running benchmark $(date -u +%FT%TZ) (quick=$QUICK)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
  echo "NVRTC ${SLATEC_LIBNVRTC:-from the prefix}; include ${SLATEC_CUDA_INCLUDE:-(prefix)}"
} >"$S"

# 1. Profiles of every benchmark kernel, as the planners read them.
rm -f "$OUT/profiles.json"
if [ -n "${FAKE:-}" ]; then
  MPS=0
  q+=(--fake "$FAKE")
  echo "## FAKE=$FAKE: a fake device, profiles measured by the bench" >>"$S"
elif [ -n "${PROFILES:-}" ]; then
  # Profiles measured before (slatec-profile/1): the run skips profiling,
  # and its predictions are those profiles'.
  cp "$PROFILES" "$OUT/profiles.json" || exit 2
  echo "## profiles: $PROFILES (not measured in this run)" >>"$S"
else
  "$SLATEC" bench "${q[@]}" --profile-commands --profiles "$OUT/profiles.json" >"$OUT/profile-commands.sh"
  t0=$(date +%s)
  if ! bash -e "$OUT/profile-commands.sh" >"$OUT/profile.log" 2>&1; then
    echo "## profiling failed (profile.log):" >>"$S"
    tail -n 20 "$OUT/profile.log" >>"$S"
    cat "$S"
    exit 1
  fi
  echo "## profiles: $(grep -c '^slatec: .* on .* SMs)' "$OUT/profile.log") kernels in $(( $(date +%s) - t0 )) s" >>"$S"
  grep -E '^  class ' "$OUT/profile.log" | paste -sd' ' >>"$S"
fi

# 2. The MPS control daemon, private to this run. Only the bench's MPS
# children connect to it (SLATEC_MPS_PIPE_DIRECTORY, see corun.MPSPipeDir);
# the bench process itself stays a plain CUDA client.
mps_up=0
if [ "$MPS" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
  export SLATEC_MPS_PIPE_DIRECTORY=$OUT/mps-pipe
  mkdir -p "$SLATEC_MPS_PIPE_DIRECTORY" "$OUT/mps-log"
  if CUDA_MPS_PIPE_DIRECTORY=$SLATEC_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY=$OUT/mps-log nvidia-cuda-mps-control -d; then
    mps_up=1
  else
    echo "## MPS daemon did not start: the mps mode is reported unavailable" >>"$S"
  fi
fi
stop_mps() {
  if [ "$mps_up" = 1 ]; then
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$SLATEC_MPS_PIPE_DIRECTORY nvidia-cuda-mps-control
    mps_up=0
  fi
}
trap stop_mps EXIT

# 3. The benchmark.
t0=$(date +%s)
# shellcheck disable=SC2086
prof=(--profiles "$OUT/profiles.json")
[ -n "${FAKE:-}" ] && prof=()
"$SLATEC" bench "${q[@]}" "${prof[@]}" --json --plot --out "$OUT" ${BENCH_ARGS:-} \
  >"$OUT/report.txt" 2>"$OUT/bench.log"
rc=$?
stop_mps
{
  echo "## slatec bench: exit $rc in $(( $(date +%s) - t0 )) s"
  if [ "$rc" = 0 ]; then
    sed -n '/^resizes:/,$p' "$OUT/report.txt"
    grep '^unavailable:' "$OUT/report.txt" | sort -u -t: -k3 | head -n 5
  else
    tail -n 20 "$OUT/bench.log"
  fi
  ls "$OUT"/*.json "$OUT"/*.svg 2>/dev/null
} >>"$S"
cat "$S"
exit "$rc"
