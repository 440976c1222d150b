#!/usr/bin/env bash
# Compiles every CUDA file under the given directories with nvcc for sm_90
# (-c only: no GPU and no linking needed) and fails if any does not compile.
# Files whose first line holds "slatec: nvcc-skip" are inputs that are meant
# not to compile (none at present; the marker keeps such a case explicit).
set -uo pipefail
nvcc=${NVCC:-.cuda/nvidia/cu13/bin/nvcc}
jobs=${JOBS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
files=$(find "$@" -name '*.cu' -type f 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "nvcc-check: no .cu files under $*"; exit 0; }
fail=0; n=0
compile() {
  local f=$1
  head -1 "$f" | grep -q 'slatec: nvcc-skip' && return 0
  local o="$out/$(echo "$f" | tr '/' '_').o"
  if ! "$nvcc" -std=c++17 -arch=sm_90 -Itestdata/include -c "$f" -o "$o" >"$o.log" 2>&1; then
    echo "nvcc-check: FAIL $f"; sed 's/^/    /' "$o.log" | head -30; return 1
  fi
  if grep -q "warning" "$o.log"; then echo "nvcc-check: warnings in $f"; sed 's/^/    /' "$o.log" | head -10; fi
}
export -f compile; export nvcc out
if ! printf '%s\n' $files | xargs -P "$jobs" -I{} bash -c 'compile "$@"' _ {}; then fail=1; fi
n=$(printf '%s\n' $files | wc -l)
if [ $fail -ne 0 ]; then echo "nvcc-check: failures among $n files"; exit 1; fi
echo "nvcc-check: $n files compile for sm_90"
