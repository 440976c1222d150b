#!/usr/bin/env bash
# mps-order.sh: does a kernel of one MPS client wait behind the grids
# another client queued earlier, even with SMs free? (bench/topology/
# mps_order.cu says how it tells.) On the GPU machine:
#
#   run(command: "OUT=$OUT/o ./scripts/mps-order.sh")
#
# Environment:
#   NVCC    the compiler (default nvcc)
#   CASES   hog configurations, BLOCKS:AHEAD[:THREADS[:BLOCK_US]] each
#           (threads a block, default 1024; each block's time, default 1000
#           us; default cases: a few SMs' worth with 20 launches queued
#           ahead, the same with one, all SMs with 20 and with one)
#   PROBE   the probe kernel, "BLOCKS THREADS BLOCK_US" (default "1 32 5";
#           "48 64 1200" is the serve_dep_ms kernel's shape)
#   COUNT   probes (default 30); HOG_ROUNDS the hog's rounds (default 8)
#   MPS_ORDER_BURST, MPS_ORDER_PRIORITY, MPS_ORDER_HOG_PRIORITY: passed on
#           (bench/topology/mps_order.cu: launches a probe, stream priorities)
#   MPS     1 (default): start the MPS control daemon, stop it after
#   OUT     where mps-order.txt goes
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$PWD/.work/mps-order}
mkdir -p "$OUT"
T="$OUT/mps-order.txt"
: >"$T"
say() { echo "$@" | tee -a "$T"; }
bin="$OUT/mps_order"
"${NVCC:-nvcc}" -std=c++17 -O2 -arch=native -o "$bin" bench/topology/mps_order.cu || { say "mps-order: build failed"; exit 1; }
say "mps-order: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
if [ "${MPS:-1}" = 1 ]; then
    nvidia-cuda-mps-control -d && say "mps-order: MPS started" || say "mps-order: MPS did not start"
fi
"$bin" probe "${COUNT:-50}" ${PROBE:-} | grep '^probe n=' | sed 's/^/alone: /' | tee -a "$T"
for c in ${CASES:-32:20 32:1 132:20 132:1}; do
    IFS=: read -r blocks ahead threads block_us <<<"$c"
    threads=${threads:-1024}
    block_us=${block_us:-1000}
    tag="$blocks.$ahead.$threads.$block_us"
    go="$OUT/go.$tag"
    rm -f "$go"
    MPS_ORDER_GO="$go" "$bin" hog "$blocks" "$ahead" "${HOG_ROUNDS:-8}" "$threads" "$block_us" >"$OUT/hog.$tag.txt" 2>&1 &
    hp=$!
    MPS_ORDER_GO="$go" "$bin" probe "${COUNT:-30}" ${PROBE:-} >"$OUT/probe.$tag.txt" 2>&1 &
    pp=$!
    for _ in $(seq 1 200); do
        grep -q ready "$OUT/hog.$tag.txt" 2>/dev/null && grep -q ready "$OUT/probe.$tag.txt" 2>/dev/null && break
        sleep 0.05
    done
    touch "$go"
    wait "$hp" "$pp"
    say "hog blocks=$blocks threads=$threads block_us=$block_us ahead=$ahead: $(grep '^probe n=' "$OUT/probe.$tag.txt") ($(grep '^hog ' "$OUT/hog.$tag.txt"))"
done
[ "${MPS:-1}" = 1 ] && echo quit | nvidia-cuda-mps-control
say "mps-order: done"
