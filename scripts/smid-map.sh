#!/usr/bin/env bash
# smid-map.sh: do processes under MPS see the same %smid numbering? (see
# bench/topology/smid_map.cu). A hold keeps a set of SMs busy by its own
# %smid; a probe then fills every SM once; probe blocks that start while the
# hold runs sit on SMs the hold does not use. Shared numbering means no
# early probe block names an SM of the hold's set. Control case: hold and
# probe in one process. Then under MPS, with the hold's set a range and
# each bit of the SM id (the bit runs together name, for every early probe
# SM, the hold's id of the same physical SM when the probe's numbering is
# the same in every run). On the GPU machine:
#
#   run(command: "OUT=$OUT/m ./scripts/smid-map.sh")
#
# PARTS: which parts run (default "duo ranges bits seq"); MPS=0 runs only duo.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$PWD/.work/smid-map}
mkdir -p "$OUT"
T="$OUT/smid-map.txt"
: >"$T"
say() { echo "$@" | tee -a "$T"; }
bin="$OUT/smid_map"
"${NVCC:-nvcc}" -std=c++17 -O2 -arch=native -o "$bin" bench/topology/smid_map.cu || { say "smid-map: build failed"; exit 1; }
say "smid-map: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
HOLD_MS=${HOLD_MS:-1500}
PARTS=${PARTS:-duo ranges bits seq green}   # green: also the percentage case
part() { grep -qw "$1" <<<"$PARTS"; }
analyse() { python3 scripts/smid_map.py "$@"; }

if part duo; then
    say "## one process, two streams (control)"
    "$bin" duo range 0 65 "$HOLD_MS" >"$OUT/duo.out" 2>&1
    say "$(analyse "duo range 0:65" "$OUT/duo.out" "$OUT/duo.out")"
fi

# two processes: the hold first, the probe once the hold's kernel is queued
pair() { # name hold-args... ($HOLD_GREEN / $PROBE_GREEN: each one's $SMID_GREEN;
         # $HOLD_ENV / $PROBE_ENV: more assignments for each)
    local name=$1; shift
    env ${HOLD_ENV:-} SMID_GREEN=${HOLD_GREEN:-} "$bin" hold "$@" "$HOLD_MS" >"$OUT/$name.hold" 2>&1 &
    local pid=$! i
    for i in $(seq 1 400); do grep -q 'hold launched' "$OUT/$name.hold" 2>/dev/null && break; sleep 0.01; done
    sleep 0.05
    env ${PROBE_ENV:-} SMID_GREEN=${PROBE_GREEN:-} "$bin" probe "$HOLD_MS" >"$OUT/$name.probe" 2>&1
    wait $pid
    say "$(analyse "$name" "$OUT/$name.hold" "$OUT/$name.probe")"
}
# the same, with a probe that has launched once on the idle GPU before the
# hold starts (smid_map probe2): is its numbering fixed from then on?
seq_pair() { # name hold-args...
    local name=$1; shift
    local fifo="$OUT/$name.fifo" i
    rm -f "$fifo"; mkfifo "$fifo"
    "$bin" probe2 "$HOLD_MS" <"$fifo" >"$OUT/$name.probe" 2>&1 &
    local ppid=$!
    exec 3>"$fifo"
    for i in $(seq 1 400); do grep -q 'probe ready' "$OUT/$name.probe" 2>/dev/null && break; sleep 0.01; done
    "$bin" hold "$@" "$HOLD_MS" >"$OUT/$name.hold" 2>&1 &
    local hpid=$!
    for i in $(seq 1 400); do grep -q 'hold launched' "$OUT/$name.hold" 2>/dev/null && break; sleep 0.01; done
    sleep 0.05
    echo go >&3
    exec 3>&-
    wait $ppid $hpid
    rm -f "$fifo"
    say "$(analyse "$name" "$OUT/$name.hold" "$OUT/$name.probe")"
}
if [ "${MPS:-1}" = 1 ]; then
    nvidia-cuda-mps-control -d 2>/dev/null && say "smid-map: MPS started" || say "smid-map: MPS not started"
    if part duo; then
        # one process under MPS: do its own two launches share a numbering?
        # (The Go runtime's co-run scheduler ranges kernels of one process.)
        say "## MPS: one process, two streams"
        "$bin" duo range 0 65 "$HOLD_MS" >"$OUT/duo-mps.out" 2>&1
        say "$(analyse "duo under MPS range 0:65" "$OUT/duo-mps.out" "$OUT/duo-mps.out")"
    fi
    if part ranges; then
        say "## MPS: hold and probe in two processes"
        for r in "0 65" "66 131" "0 31"; do set -- $r; pair "mps-range-$1-$2" range "$1" "$2"; done
        pair "mps-range-0-65-again" range 0 65
    fi
    if part bits; then
        bits=()
        for b in 0 1 2 3 4 5 6 7; do pair "mps-bit-$b" bit "$b"; bits+=("$OUT/mps-bit-$b.hold" "$OUT/mps-bit-$b.probe"); done
        say "$(python3 scripts/smid_map.py --bits "${bits[@]}")"
    fi
    if part seq; then
        say "## MPS: the probe fills the idle GPU once, then probes beside the hold"
        for r in "0 65" "0 31" "66 131"; do set -- $r; seq_pair "mps-seq-$1-$2" range "$1" "$2"; done
    fi
    if part green; then
        # green contexts: do parts of the same split name the same SMs in
        # two processes? The hold spins on every SM of its part.
        say "## MPS: green contexts in two processes (split by ${GREEN_N:=64})"
        HOLD_GREEN=$GREEN_N:0 PROBE_GREEN=$GREEN_N:1 pair "mps-green-0-beside-1" range 0 100000
        HOLD_GREEN=$GREEN_N:0 PROBE_GREEN=$GREEN_N:0 pair "mps-green-0-beside-0" range 0 100000
        HOLD_GREEN=$GREEN_N:0 PROBE_GREEN= pair "mps-green-0-beside-whole" range 0 100000
        HOLD_GREEN= PROBE_GREEN=$GREEN_N:1 pair "mps-range-0-65-beside-green-1" range 0 65
        say "## MPS: active thread percentage 50 in each process"
        HOLD_ENV=CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 PROBE_ENV=CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 pair "mps-pct-50-beside-50" range 0 100000
        grep -h 'smid_map: green' "$OUT"/mps-green-*.hold "$OUT"/mps-green-*.probe | sort | uniq -c | sed 's/^/   /' | tee -a "$T"
    fi
    echo quit | nvidia-cuda-mps-control 2>/dev/null
fi
say "smid-map: done"
