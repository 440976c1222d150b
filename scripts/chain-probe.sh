#!/usr/bin/env bash
# chain-probe.sh: where and how fast a latency-bound kernel's blocks run
# beside a harness program under MPS (bench/topology/mps_order.cu's chain
# mode: each block's SM and time from its own clock). On the GPU machine,
# after scripts/gpu-serve.sh's build phase made $W/NAME.plain:
#
#   run(command: "PHASES=build NAMES=serve_fma_ms ./scripts/gpu-serve.sh; ./scripts/chain-probe.sh")
#
# CASES: space-separated NAME=MODE[@PRIORITY] (MODE native, persistent or
# LO:HI as in range-pair.sh; PRIORITY the probe's stream: high or low);
# "alone" runs the probe by itself; hog:BLOCKS:AHEAD:THREADS:BLOCK_US runs
# mps_order's spin hog (HOG_ROUNDS rounds, default 8) in place of a harness. CHAIN: the probe's "COUNT BLOCKS THREADS
# ITERS" (default serve_dep_ms's shape). REPS: the harness's HARNESS_REPS
# (default 60: about 0.4 s of FMA rounds); HOG_LEAD: seconds from the
# harness's start to the probe's go (default 0.4), DELAY_MS the probe's wait
# after it (default 30); MPS_ORDER_GAP_MS passes on; SLOWEST=1 prints each
# block of the slowest launch (SM:us).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
W=${W:-/tmp/slatec-serve}
OUT=${OUT:-$PWD/.work/chain-probe}
mkdir -p "$OUT"
T="$OUT/chain-probe.txt"
: >"$T"
say() { echo "$@" | tee -a "$T"; }
# BIN: an mps_order already built (range-probe.sh passes its own).
bin=${BIN:-$OUT/mps_order}
[ -n "${BIN:-}" ] || "${NVCC:-nvcc}" -std=c++17 -O2 -arch=native -o "$bin" bench/topology/mps_order.cu || { say "chain-probe: build failed"; exit 1; }
[ "${MPS:-1}" = 1 ] && { nvidia-cuda-mps-control -d 2>/dev/null && say "chain-probe: MPS started" || say "chain-probe: MPS not started"; }
unset SLATE_MODE SLATE_SM_RANGE SLATE_PRIORITY
for c in ${CASES:-alone serve_fma_ms=native serve_fma_ms=native@high}; do
    prio=
    case $c in *@*) prio=${c#*@} c=${c%@*} ;; esac
    go="$OUT/go"
    rm -f "$go"
    MPS_ORDER_GO="$go" MPS_ORDER_PRIORITY="$prio" MPS_ORDER_DELAY_MS=${DELAY_MS:-30} "$bin" chain ${CHAIN:-10 48 64 49152} >"$OUT/probe.out" 2>&1 &
    pp=$!
    for _ in $(seq 1 200); do grep -q ready "$OUT/probe.out" 2>/dev/null && break; sleep 0.02; done
    hp=
    if [ "${c%%:*}" = hog ]; then
        IFS=: read -r _ blocks ahead threads block_us <<<"$c"
        "$bin" hog "$blocks" "$ahead" "${HOG_ROUNDS:-8}" "$threads" "$block_us" >"$OUT/hog.out" 2>&1 &
        hp=$!
        for _ in $(seq 1 200); do grep -q ready "$OUT/hog.out" 2>/dev/null && break; sleep 0.02; done
    elif [ "$c" != alone ]; then
        n=${c%%=*} m=${c#*=}
        case $m in
        native) e=(SLATE_MODE=native) ;;
        persistent) e=(SLATE_MODE=persistent) ;;
        *:*) e=(SLATE_MODE=persistent SLATE_SM_RANGE="$m") ;;
        *) say "chain-probe: $c: mode $m is not native, persistent or LO:HI"; exit 2 ;;
        esac
        (cd "$W" && env "${e[@]}" SLATEC_SOCKET="$W/nothing/serve.sock" HARNESS_REPS="${REPS:-60}" HARNESS_SPAN=1 \
            timeout 300 "./$n.plain" >"$OUT/hog.out" 2>&1) &
        hp=$!
        sleep "${HOG_LEAD:-0.4}" # its CUDA start-up and input: the probe starts inside its timed rounds
    fi
    touch "$go"
    wait $pp $hp
    say "== $c${prio:+ (probe priority $prio)}: $(grep '^chain n=' "$OUT/probe.out")${hp:+; hog $(awk '$1 == "HARNESS_TIME" { print $3 " us/run" } $1 == "hog" && $2 != "ready" { print }' "$OUT/hog.out")}"
    say "   $(grep '^chain wall_us' "$OUT/probe.out")"
    say "   $(grep '^chain spans_ms' "$OUT/probe.out")"
    [ -n "${SLOWEST:-}" ] && say "   $(grep '^chain slowest' "$OUT/probe.out")"
    [ -n "$hp" ] && say "   hog: $(grep -E '^HARNESS_(WALL|SPAN)' "$OUT/hog.out" | tr '\n' ' ')"
done
[ "${MPS:-1}" = 1 ] && echo quit | nvidia-cuda-mps-control 2>/dev/null
exit 0
