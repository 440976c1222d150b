#!/usr/bin/env bash
# range-pair.sh: two transformed harness programs at once under MPS, each in
# its own launch mode (no daemon), to tell what slows one beside the other:
# SLATE_SM_RANGE ranges against native launches, whole-wave worker grids
# against the hardware's own placement. On the GPU machine, after
# scripts/gpu-serve.sh's build phase made $W/NAME.plain:
#
#   run(command: "PHASES=build NAMES='serve_stream_ms serve_dep_ms' ./scripts/gpu-serve.sh;
#                 CASES='...' ./scripts/range-pair.sh")
#
# CASES: space-separated cases A=ENV,B=ENV, where A and B are harness names
# and ENV is "native" (SLATE_MODE=native), "persistent" (the static worker
# on all SMs) or LO:HI (SLATE_SM_RANGE=LO:HI, the queue worker on that range);
# a case with one program runs it alone. A mode may end in @high or @low:
# the program's launches at that stream priority ($SLATE_PRIORITY); or in
# @gN: its partial-range launches with at most N workers ($SLATE_RANGE_GRID). Each case runs $ROUNDS times
# (default 2), both programs started together at a start line; printed per
# program: HARNESS_TIME (median, best us a run) and HARNESS_WALL (the
# warm-up's and each round's wall-clock us).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
W=${W:-/tmp/slatec-serve}
OUT=${OUT:-$PWD/.work/range-pair}
REPS=${REPS:-10}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
T="$OUT/range-pair.txt"
: >"$T"
say() { echo "$@" | tee -a "$T"; }
[ "${MPS:-1}" = 1 ] && { nvidia-cuda-mps-control -d 2>/dev/null && say "range-pair: MPS started" || say "range-pair: MPS not started (running already?)"; }
unset SLATE_MODE SLATE_SM_RANGE SLATE_ITERS
for c in ${CASES:?CASES names the cases}; do
    IFS=, read -r -a progs <<<"$c"
    for r in $(seq 1 "$ROUNDS"); do
        gate="$W/gate/rp.$c.$r"
        rm -rf "$gate"
        pids=()
        for i in "${!progs[@]}"; do
            n=${progs[$i]%%=*} m=${progs[$i]#*=} prio=
            case $m in *@*) prio=${m#*@} m=${m%@*} ;; esac
            case $m in
            native) e=(SLATE_MODE=native) ;;
            persistent) e=(SLATE_MODE=persistent) ;;
            *:*) e=(SLATE_MODE=persistent SLATE_SM_RANGE="$m") ;;
            *) say "range-pair: $c: mode $m is not native, persistent or LO:HI"; exit 2 ;;
            esac
            case $prio in
            "") ;;
            g[0-9]*) e+=(SLATE_RANGE_GRID="${prio#g}") ;;
            *) e+=(SLATE_PRIORITY="$prio") ;;
            esac
            (cd "$W" && env "${e[@]}" SLATEC_SOCKET="$W/nothing/serve.sock" HARNESS_REPS="$REPS" HARNESS_SPAN=1 \
                HARNESS_GATE="$gate:${#progs[@]}" timeout 300 "$W/$n.plain" >"$OUT/$i.out" 2>&1) &
            pids+=($!)
        done
        wait "${pids[@]}"
        line="$c round $r:"
        for i in "${!progs[@]}"; do
            line+=" ${progs[$i]} $(awk '$1 == "HARNESS_TIME" { t = $3 "/" $4 } $1 == "HARNESS_WALL" { w = ""; for (i = 3; i <= NF; i++) w = w (i == 3 ? "" : "/") sprintf("%.1f", $i / 1000) }
                $1 == "HARNESS_SPAN" { s = ($3 - $2) / 1000 } $1 == "PASS" { ok = "pass" }
                END { printf "span %.1f ms, us/run %s, wall ms %s, self-check %s;", s, t, w, ok ? ok : "FAIL" }' "$OUT/$i.out")"
        done
        say "$line"
    done
done
[ "${MPS:-1}" = 1 ] && echo quit | nvidia-cuda-mps-control 2>/dev/null
exit 0
