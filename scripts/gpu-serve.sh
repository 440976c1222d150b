#!/usr/bin/env bash
# GPU check of the slatec serve C++ client (docs/SERVE.md, "The C++ client").
# Transformed harnesses (golden/NAME.cu) run in the default policy,
# SLATE_MODE=auto, and are compared with the original programs:
#
#   nodaemon  SLATEC_SOCKET names nothing: the programs run natively; the
#             output matches, and the log says "no daemon"
#   served    the daemon (.gpu/slatec serve) runs; harnesses run two processes
#             at a time, $REPS repetitions each, with SLATE_COUNT=1 (every
#             logical block exactly once, across resizes) and SLATE_LOG=1;
#             outputs match; `slatec top --json` is kept (resize outcomes)
#   killed    as served, and the daemon is killed (SIGKILL) mid-run: the
#             programs finish on the whole GPU, outputs match
#   cost      host cost per launch: HARNESS_TIME medians of a program built
#             without hooks, natively (no daemon) vs served (alone)
#
# Runs on the GPU machine (nvcc, python3; no Go): `make gpu-build` here first
# and carry .gpu. MPS=1 starts the MPS control daemon (and stops it after).
# Results: $OUT/serve-summary.txt (printed), $OUT/serve/* logs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/gpu-out}
W=${W:-/tmp/slatec-serve}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
PHASES=${PHASES:-build nodaemon served killed cost}
NAMES=${NAMES:-saxpy_grid_stride sgemm_tiled black_scholes histogram256 multi_kernel_loop stencil1d_halo reduce_small_grid scan_blelloch}
REPS=${REPS:-30}
SLATEC=${SLATEC:-.gpu/slatec}
unset SLATE_MODE SLATE_SM_RANGE SLATE_ITERS SLATE_RETREAT
mkdir -p "$OUT/serve" "$W"
L="$OUT/serve"
S="$OUT/serve-summary.txt"
: >"$S"
say() { echo "$*" | tee -a "$S"; }
has() { grep -qw "$1" <<<"$PHASES"; }
sock="$W/serve.sock"
say "gpu-serve: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); names: $NAMES"

if [ "${MPS:-}" = 1 ]; then
    nvidia-cuda-mps-control -d && say "gpu-serve: MPS started" || say "gpu-serve: MPS did not start"
fi

daemon_pid=
start_daemon() {
    rm -f "$sock"
    "$SLATEC" serve --socket "$sock" --log "$L/serve-$1.log" &
    daemon_pid=$!
    for _ in $(seq 50); do [ -S "$sock" ] && return 0; sleep 0.1; done
    say "gpu-serve: daemon did not start"; return 1
}
stop_daemon() { [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; daemon_pid=; }

if has build; then
    # The builds run in parallel (nvcc is single-threaded).
    builds=()
    for n in $NAMES; do
        flags="-std=c++17 -O2 -arch=$ARCH -Itestdata/include -Itestdata/kernels"
        { { $NVCC $flags -o "$W/$n.orig" "testdata/kernels/$n.cu" &&
            $NVCC $flags -DSLATE_TEST_HOOKS -Igolden -o "$W/$n.hooks" "golden/$n.cu" &&
            $NVCC $flags -Igolden -o "$W/$n.plain" "golden/$n.cu"; } >"$L/$n.build.log" 2>&1 || say "BUILD-FAIL $n"; } &
        builds+=($!)
    done
    wait "${builds[@]}"
    for n in $NAMES; do
        [ -x "$W/$n.orig" ] && (cd "$W" && HARNESS_OUT="$W/$n.orig.bin" timeout 120 "$W/$n.orig" >"$L/$n.orig.out" 2>&1) || say "FAIL $n original"
    done
fi

# check NAME TAG: compares a run's dump with the original's.
check() {
    local n=$1 tag=$2
    if ! grep -q PASS "$L/$n.$tag.out"; then say "FAIL $n $tag no PASS line ($(grep -m1 -E 'FAIL|error' "$L/$n.$tag.err" "$L/$n.$tag.out" | head -1))"; return; fi
    local cmp
    if cmp=$(python3 scripts/cmpdump.py "$W/$n.orig.bin" "$W/$n.$tag.bin" 2>&1); then
        say "PASS $n $tag served-launches=$(grep -c 'slate: serve: .* sms=' "$L/$n.$tag.err") counted-once=$(grep -c 'ran exactly once' "$L/$n.$tag.err") $(tail -1 <<<"$cmp")"
    else
        say "FAIL $n $tag outputs differ: $(tail -1 <<<"$cmp")"
    fi
}
# run NAME TAG ENV...: one transformed run (hooks build) in the background.
run() {
    local n=$1 tag=$2; shift 2
    (cd "$W" && env "$@" SLATE_LOG=1 HARNESS_OUT="$W/$n.$tag.bin" timeout 300 "$W/$n.hooks" >"$L/$n.$tag.out" 2>"$L/$n.$tag.err")
}

if has nodaemon; then
    for n in $NAMES; do
        t0=$(date +%s%N)
        run "$n" nodaemon SLATEC_SOCKET="$W/nothing/serve.sock" SLATE_COUNT=1
        t1=$(date +%s%N)
        grep -q 'no daemon at' "$L/$n.nodaemon.err" || say "FAIL $n nodaemon: no 'no daemon' line"
        check "$n" nodaemon
        say "    $n nodaemon wall $(((t1 - t0) / 1000000)) ms"
    done
fi

# pairs: each harness with the next one, two processes at once.
pairs() {
    local a=($NAMES) i
    for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[$i]} ${a[$(((i + 1) % ${#a[@]}))]}"; done
}

if has served; then
    start_daemon served && {
        while read -r a b; do
            # wait on the two programs only: a bare wait would also wait
            # for the daemon, a background job of this shell.
            run "$a" "served-$b" SLATEC_SOCKET="$sock" SLATE_COUNT=1 HARNESS_REPS="$REPS" &
            p1=$!
            run "$b" "served-$a" SLATEC_SOCKET="$sock" SLATE_COUNT=1 HARNESS_REPS="$REPS" &
            p2=$!
            wait "$p1" "$p2"
            check "$a" "served-$b"
            check "$b" "served-$a"
        done < <(pairs)
        "$SLATEC" top --json --socket "$sock" >"$L/top-served.json" 2>&1
        python3 - "$L/top-served.json" <<'EOF' | tee -a "$S"
import collections, json, sys
s = json.load(open(sys.argv[1]))
rs = s.get("resizes") or []
o = collections.Counter(r["outcome"] for r in rs)
lat = sorted(r.get("latency_us", 0) for r in rs if r["outcome"] == "ok")
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0
print("served: last %d resizes: %s; ack latency p50 %s us p90 %s us" % (len(rs), dict(o), p(0.5), p(0.9)))
EOF
        stop_daemon
    }
fi

if has killed; then
    read -r a b < <(pairs | head -1)
    start_daemon killed && {
        run "$a" "killed-$b" SLATEC_SOCKET="$sock" SLATE_COUNT=1 HARNESS_REPS=$((REPS * 4)) &
        p1=$!
        run "$b" "killed-$a" SLATEC_SOCKET="$sock" SLATE_COUNT=1 HARNESS_REPS=$((REPS * 4)) &
        p2=$!
        sleep "${KILL_AFTER:-1}"
        kill -9 "$daemon_pid"; daemon_pid=
        wait "$p1" "$p2"
        check "$a" "killed-$b"
        check "$b" "killed-$a"
        grep -h 'daemon lost' "$L/$a.killed-$b.err" "$L/$b.killed-$a.err" | head -2 | sed 's/^/    /' | tee -a "$S"
    }
fi

if has cost; then
    n=${COST_NAME:-saxpy_grid_stride}
    (cd "$W" && SLATEC_SOCKET="$W/nothing/serve.sock" HARNESS_REPS=200 "$W/$n.plain" >"$L/$n.cost-native.out" 2>&1)
    start_daemon cost && {
        (cd "$W" && SLATEC_SOCKET="$sock" HARNESS_REPS=200 "$W/$n.plain" >"$L/$n.cost-served.out" 2>&1)
        stop_daemon
    }
    (cd "$W" && SLATE_MODE=native HARNESS_REPS=200 "$W/$n.plain" >"$L/$n.cost-modenative.out" 2>&1)
    for t in modenative native served; do say "cost $n $t: $(grep HARNESS_TIME "$L/$n.cost-$t.out" | tr '\n' ' ')"; done
fi

[ "${MPS:-}" = 1 ] && echo quit | nvidia-cuda-mps-control
say "gpu-serve: $(grep -c '^PASS' "$S") passed, $(grep -c '^FAIL\|^BUILD-FAIL' "$S") failed"
cat "$S" >/dev/null
