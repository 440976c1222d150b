#!/usr/bin/env bash
# Real-world trial on karpathy/llm.c's dev/cuda programs (public code written
# by others, fetched into .realworld/llm.c/dev/cuda, never committed): each
# program is a benchmark of several versions of one kernel that checks every
# version against a CPU reference (validate_result exits non-zero on a
# mismatch). Each program is transformed together with common.h; the
# original and the transformed one are built and run with every kernel
# version it has (argv[1] = 1, 2, ... until the program rejects the number),
# and a third build counts executions per logical block on every launch
# (-DSLATE_TEST_HOOKS, SLATE_COUNT=1): each must run exactly once.
#
#   scripts/llmc-trial.sh transform   # here: writes .realworld/llmc-out/NAME/ with the slatec binary
#   scripts/llmc-trial.sh run         # on the GPU machine: builds and runs, results in $OUT/llmc.txt
#
# Knobs for run: ONLY=REGEX picks programs, JOBS parallel builds (8),
# DEADLINE seconds after which no new kernel version starts, HOOKS_TIMEOUT
# per counted run (600). Logs come back in $OUT/llmc-logs.tar.xz.
#
# Files whose version does not build against the fetched common.h are
# reported as such and skipped. Locally (no cuBLAS wheel) the transform step
# compiles nothing; STUBS=DIR points nvcc -c checks at stand-in headers.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/trial.sh
. scripts/lib/trial.sh
SRC=${SRC:-.realworld/llm.c/dev/cuda}
OUTDIR=${OUTDIR:-.realworld/llmc-out}
OUT=${OUT:-$PWD/.work/llmc-out}
MAXK=${MAXK:-12}
flags="-std=c++17 -O3 --use_fast_math -arch=$ARCH -include cuda_bf16.h -include cuda_fp16.h"

programs() { for f in "$SRC"/*.cu; do basename "$f" .cu; done; }

case "${1:-}" in
transform)
    trial_outdir
    for n in $(programs); do
        mkdir -p "$OUTDIR/$n"
        # From inside SRC, so that the outputs land at DIR/NAME.cu and DIR/common.h
        # (-o DIR keeps each input's relative path).
        if (cd "$SRC" && "$slatec" transform -o "$outdir/$n" "$n.cu" common.h) 2>"$OUTDIR/$n/slatec.log"; then
            echo "transformed $n ($(grep -c '__slate(slate_ctl' "$OUTDIR/$n/$n.cu") kernels)"
        else
            echo "REFUSED $n: $(grep -m1 error: "$OUTDIR/$n/slatec.log")"
        fi
    done
    ;;
run)
    mkdir -p "$OUT"
    W=/tmp/slatec-llmc
    rm -rf "$W"
    mkdir -p "$W"
    printf '%-28s %-3s %-10s %-12s %-10s %s\n' program k original transformed counted note >"$OUT/llmc.txt"
    verdict() { # rc, log -> PASS/FAIL
        if [ "$1" = 0 ] && ! grep -qE 'Mismatch|CUDA ERROR|cuBLAS ERROR' "$2"; then echo PASS; else echo "FAIL($1)"; fi
    }
    # Build every program's three forms first, JOBS at a time (nvcc is the
    # slow part), then run them one after another (timings need the GPU alone).
    build() { # NAME: .orig always; .slate and .hooks when slatec transformed it
        local n=$1
        $NVCC $flags -I"$SRC" -o "$W/$n.orig" "$SRC/$n.cu" -lcublas -lcublasLt >"$W/$n.orig.build" 2>&1
        [ -f "$OUTDIR/$n/$n.cu" ] || return 0
        $NVCC $flags -I"$OUTDIR/$n" -o "$W/$n.slate" "$OUTDIR/$n/$n.cu" -lcublas -lcublasLt >"$W/$n.slate.build" 2>&1
        $NVCC $flags -DSLATE_TEST_HOOKS -I"$OUTDIR/$n" -o "$W/$n.hooks" "$OUTDIR/$n/$n.cu" -lcublas -lcublasLt >"$W/$n.hooks.build" 2>&1
    }
    for n in $(programs); do
        [[ $n =~ ${ONLY:-.} ]] || continue
        while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-8}" ]; do wait -n; done
        build "$n" &
    done
    wait
    for n in $(programs); do
        [[ $n =~ ${ONLY:-.} ]] || continue
        [ -x "$W/$n.orig" ] || {
            printf '%-28s %s\n' "$n" "original does not build: $(grep -m1 -E 'error' "$W/$n.orig.build" | cut -c1-100)" >>"$OUT/llmc.txt"; continue; }
        if [ ! -f "$OUTDIR/$n/$n.cu" ]; then
            printf '%-28s %s\n' "$n" "refused by slatec: $(grep -m1 error: "$OUTDIR/$n/slatec.log" | cut -c1-100)" >>"$OUT/llmc.txt"; continue
        fi
        [ -x "$W/$n.slate" ] || {
            printf '%-28s %s\n' "$n" "TRANSFORMED DOES NOT BUILD: $(grep -m1 error "$W/$n.slate.build" | cut -c1-100)" >>"$OUT/llmc.txt"; continue; }
        for k in $(seq 1 "$MAXK"); do
            # DEADLINE (seconds since the start): stop early, keep what ran.
            if [ "$SECONDS" -ge "${DEADLINE:-86400}" ]; then
                printf '%-28s %-3s %s\n' "$n" "$k" "not run: DEADLINE reached" >>"$OUT/llmc.txt"; break 2
            fi
            (cd "$W" && timeout 300 "./$n.orig" "$k" >"$W/$n.$k.orig.log" 2>&1); rc=$?
            # A number past the program's versions: it says so and exits.
            if grep -qiE 'invalid kernel number|unknown kernel' "$W/$n.$k.orig.log"; then break; fi
            o=$(verdict $rc "$W/$n.$k.orig.log")
            (cd "$W" && timeout 300 "./$n.slate" "$k" >"$W/$n.$k.slate.log" 2>&1); s=$(verdict $? "$W/$n.$k.slate.log")
            c="-"
            if [ -x "$W/$n.hooks" ]; then
                (cd "$W" && SLATE_COUNT=1 timeout "${HOOKS_TIMEOUT:-600}" "./$n.hooks" "$k" >"$W/$n.$k.hooks.log" 2>&1); rc=$?
                c=$(verdict $rc "$W/$n.$k.hooks.log")
                [ $rc = 124 ] && c="timeout"
            fi
            # The programs print each block size's time: the first of each build.
            to=$(grep -m1 -oE 'time [0-9.]+ ms' "$W/$n.$k.orig.log" | grep -oE '[0-9.]+')
            ts=$(grep -m1 -oE 'time [0-9.]+ ms' "$W/$n.$k.slate.log" | grep -oE '[0-9.]+')
            printf '%-28s %-3s %-10s %-12s %-10s %s\n' "$n" "$k" "$o" "$s" "$c" "${to:+ms $to -> $ts}" >>"$OUT/llmc.txt"
        done
    done
    # The logs in one archive: the device tool brings back only a few files.
    tar cJf "$OUT/llmc-logs.tar.xz" -C "$W" $(cd "$W" && ls | grep -E '\.(log|build)$')
    cat "$OUT/llmc.txt"
    ;;
*)
    echo "usage: $0 transform|run" >&2
    exit 2
    ;;
esac
