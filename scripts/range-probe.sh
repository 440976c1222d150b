#!/usr/bin/env bash
# range-probe.sh: does an SM range isolate a latency-bound kernel from an
# FMA-bound one? The chain probe and the FMA hog of bench/topology/
# mps_order.cu, each plain or as a range-bound worker (the pattern slatec's
# queue worker uses: blocks outside the range exit, the others take tasks),
# in one process on two streams (duo) and in two processes under MPS. Per
# case: the probe's launch time by events (dispatch included) and by its
# blocks' own clocks, and each block's time. On the GPU machine:
#
#   run(command: "OUT=$OUT/p ./scripts/range-probe.sh")
#
# CASES: space-separated cases, each a comma-separated list of assignments
# to MPS_ORDER_RANGE / MPS_ORDER_GRID (the probe) and MPS_ORDER_HOG_RANGE /
# MPS_ORDER_HOG_GRID (the hog), or "plain" for neither (see mps_order.cu);
# COUNT probe launches a case (default 100); MPS=0 skips the MPS half.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$PWD/.work/range-probe}
mkdir -p "$OUT"
T="$OUT/range-probe.txt"
: >"$T"
say() { echo "$@" | tee -a "$T"; }
bin="$OUT/mps_order"
"${NVCC:-nvcc}" -std=c++17 -O2 -arch=native -o "$bin" bench/topology/mps_order.cu || { say "range-probe: build failed"; exit 1; }
say "range-probe: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
CASES=${CASES:-plain MPS_ORDER_HOG_RANGE=40:131 MPS_ORDER_RANGE=0:7 MPS_ORDER_RANGE=0:7,MPS_ORDER_HOG_RANGE=40:131 MPS_ORDER_RANGE=0:7,MPS_ORDER_GRID=256,MPS_ORDER_HOG_RANGE=40:131 MPS_ORDER_RANGE=0:7,MPS_ORDER_HOG_RANGE=8:131 MPS_ORDER_HOG_RANGE=0:47}
envs() { [ "$1" = plain ] && return; tr ',' '\n' <<<"$1"; }
say "## alone (no hog)"
for c in plain MPS_ORDER_RANGE=0:7; do
    mapfile -t e < <(envs "$c")
    say "== $c: $(env "${e[@]}" MPS_ORDER_GAP_MS=0 "$bin" chain "${COUNT:-100}" 48 64 49152 | grep '^chain n=')"
done
say "## duo: one process, two streams (FMA hog 16384 x 256 x 2048 steps, 60 queued)"
for c in $CASES; do
    mapfile -t e < <(envs "$c")
    out=$(env "${e[@]}" MPS_ORDER_GAP_MS=0 "$bin" duo "${COUNT:-100}" 48 64 49152 16384 60 2048)
    say "== $c: $(grep '^chain n=' <<<"$out")"
    say "   $(grep '^chain worker' <<<"$out")"
    say "   $(grep '^chain slowest' <<<"$out" | cut -c1-600)"
done
if [ "${MPS:-1}" = 1 ]; then
    say "## MPS: two processes (the same hog, its own process)"
    for c in $CASES; do
        mapfile -t e < <(envs "$c")
        env "${e[@]}" MPS_ORDER_HOG_KERNEL=fma CHAIN="${COUNT:-100} 48 64 49152" MPS_ORDER_GAP_MS=0 DELAY_MS=5 HOG_ROUNDS=12 \
            SLOWEST=1 CASES='hog:16384:60:256:2048' BIN="$bin" OUT="$OUT/mps" ./scripts/chain-probe.sh >/dev/null 2>&1
        say "== $c: $(grep '^== ' "$OUT/mps/chain-probe.txt" | sed 's/^== hog:[^:]*:[^:]*:[^:]*:[^:]*: //')"
        say "   $(grep 'chain slowest' "$OUT/mps/chain-probe.txt" | cut -c1-600)"
    done
fi
say "range-probe: done"
