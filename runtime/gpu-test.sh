#!/usr/bin/env bash
# gpu-test.sh: runs the runtime's test binary on the GPU machine and prints
# a short summary last.
#
#   here (CGO on):          go test -c -o .gpu/runtime.test ./runtime
#   there (from repo root): ./runtime/gpu-test.sh        (device tool: carry [".gpu"])
#
# Environment:
#   RUN        test regexp (default: all tests, CPU ones included)
#   BENCH      benchmark regexp (default "."; empty to skip benchmarks)
#   BENCHTIME  -test.benchtime (default 100x)
#   TIMEOUT    -test.timeout (default 8m)
#   OUT        where the log and summary go (the device tool sets it)
#   SLATEC_LIBNVRTC / SLATEC_CUDA_PREFIX / SLATEC_CUDA_INCLUDE / SLATEC_LIBCUDA
#              as in runtime/doc.go; when unset, NVRTC and the CUDA headers
#              are looked up in the machine's CUDA install.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${BIN:-$root/.gpu/runtime.test}
if [ ! -x "$bin" ]; then
  echo "gpu-test: $bin not found: build it with 'go test -c -o .gpu/runtime.test ./runtime' and carry .gpu" >&2
  exit 2
fi
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

# NVRTC: the carried project prefix if any, else the machine's toolkit
# (scripts/nvrtc-env.sh, shared with the other GPU scripts).
cd "$root" || exit 2
# shellcheck source=../scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
echo "gpu-test: NVRTC ${SLATEC_LIBNVRTC:-from $prefix}; include ${SLATEC_CUDA_INCLUDE:-(prefix)}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

# The tests read testdata/ relative to the package directory.
cd "$here" || exit 2
args=(-test.v -test.count=1 -test.timeout "${TIMEOUT:-8m}" -test.run "${RUN:-.}")
bench=${BENCH-.}
[ -n "$bench" ] && args+=(-test.bench "$bench" -test.benchtime "${BENCHTIME:-100x}" -test.benchmem=false)
"$bin" "${args[@]}" 2>&1 | tee "$out/runtime-test.log"
rc=${PIPESTATUS[0]}

{
  echo "==== runtime GPU test summary (exit $rc) ===="
  for s in PASS FAIL SKIP; do
    printf '%s %d  ' "$s" "$(grep -c -- "^\s*--- $s" "$out/runtime-test.log")"
  done
  echo
  grep -E -- '^\s*--- FAIL' "$out/runtime-test.log"
  grep -E -- '^\s*--- SKIP: TestGPU' "$out/runtime-test.log" | head -3
  grep -E 'NVIDIA|H100|H200' "$out/runtime-test.log" | grep -m1 'SMs'
  grep -E 'retreat-to-drained|relaunch gap|host resize call|cache-hit kernel load|after 100 resizes|canceled after|progress read took' "$out/runtime-test.log" | sed 's/^ *//'
  grep -E '^Benchmark' "$out/runtime-test.log"
} | tee "$out/runtime-summary.txt"
exit "$rc"
