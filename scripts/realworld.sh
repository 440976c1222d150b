#!/usr/bin/env bash
# Real-world trial: CUDA sample programs written by others (NVIDIA's
# cuda-samples, fetched into .realworld/, which is not committed). Every
# .cu/.cuh of each program is transformed in drop-in mode; the original and
# the transformed program are built with nvcc from all their .cu/.cpp files
# and run; each program's own self-check must pass in both. A third run of
# the transformed program counts executions per logical block on every
# launch (-DSLATE_TEST_HOOKS, SLATE_COUNT=1): each must run exactly once.
#
#   scripts/realworld.sh transform   # here: writes .realworld/out/ with the slatec binary
#   scripts/realworld.sh run         # on the GPU machine: builds and runs, results in $OUT
set -uo pipefail
export SLATE_MODE=${SLATE_MODE:-persistent}
cd "$(dirname "$0")/.."
ROOT=.realworld/cuda-samples
SAMPLES=$ROOT/Samples
OUTDIR=.realworld/out
OUT=${OUT:-$PWD/.work/realworld-out}
SLATEC=${SLATEC:-.gpu/slatec}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}

dirs() { for d in "$SAMPLES"/*/*/; do ls "$d"*.cu >/dev/null 2>&1 && echo "${d%/}"; done; }

case "${1:-}" in
transform)
    rm -rf "$OUTDIR"
    for d in $(dirs); do
        rel=${d#$SAMPLES/}
        mkdir -p "$OUTDIR/$rel"
        cp "$d"/* "$OUTDIR/$rel/"
        files=$(ls "$d"/*.cu "$d"/*.cuh 2>/dev/null)
        if "$SLATEC" transform -I "$ROOT/Common" -o "$OUTDIR/$rel" $files 2>"$OUTDIR/$rel/slatec.log"; then
            echo "transformed $rel ($(echo $files | wc -w) files)"
        else
            echo "REFUSED $rel: $(grep -m1 error: "$OUTDIR/$rel/slatec.log")"
        fi
    done
    ;;
run)
    mkdir -p "$OUT"
    W=/tmp/slatec-realworld
    rm -rf "$W"
    mkdir -p "$W"
    printf '%-36s %-10s %-12s %-14s %s\n' sample original transformed counted note >"$OUT/realworld.txt"
    for d in $(dirs); do
        rel=${d#$SAMPLES/}
        name=$(basename "$rel")
        srcs() { ls "$1"/*.cu "$1"/*.cpp 2>/dev/null; }
        flags="-std=c++17 -O2 -arch=$ARCH -I$ROOT/Common"
        # Samples using the cuRAND host API link it.
        grep -qs '<curand.h>' "$d"/*.cpp "$d"/*.cu && flags="$flags -lcurand"
        $NVCC $flags -I"$d" -o "$W/$name.orig" $(srcs "$d") >"$W/$name.orig.build" 2>&1 || {
            printf '%-36s %s\n' "$rel" "original does not build: $(grep -m1 -E 'error|undefined' "$W/$name.orig.build")" >>"$OUT/realworld.txt"; continue; }
        if [ ! -f "$OUTDIR/$rel/slatec.log" ] || grep -q error: "$OUTDIR/$rel/slatec.log"; then
            printf '%-36s %-10s %s\n' "$rel" "-" "refused by slatec: $(grep -m1 error: "$OUTDIR/$rel/slatec.log")" >>"$OUT/realworld.txt"; continue
        fi
        $NVCC $flags -I"$OUTDIR/$rel" -o "$W/$name.slate" $(srcs "$OUTDIR/$rel") >"$W/$name.slate.build" 2>&1 || { printf '%-36s %-10s %s\n' "$rel" "-" "TRANSFORMED DOES NOT BUILD: $(grep -m1 error "$W/$name.slate.build")" >>"$OUT/realworld.txt"; continue; }
        $NVCC $flags -DSLATE_TEST_HOOKS -I"$OUTDIR/$rel" -o "$W/$name.hooks" $(srcs "$OUTDIR/$rel") >"$W/$name.hooks.build" 2>&1
        verdict() { # rc, log -> PASS/FAIL: samples exit non-zero on a failed self-check
            if [ "$1" = 0 ] && ! grep -qE 'FAILED|Test failed|MISMATCH|[Mm]ismatch at|FAIL:' "$2"; then echo PASS; else echo "FAIL($1)"; fi
        }
        (cd "$d" && timeout 300 "$W/$name.orig" >"$W/$name.orig.log" 2>&1); o=$(verdict $? "$W/$name.orig.log")
        (cd "$OUTDIR/$rel" && timeout 300 "$W/$name.slate" >"$W/$name.slate.log" 2>&1); s=$(verdict $? "$W/$name.slate.log")
        c="-"
        if [ -x "$W/$name.hooks" ]; then
            (cd "$OUTDIR/$rel" && SLATE_COUNT=1 timeout 600 "$W/$name.hooks" >"$W/$name.hooks.log" 2>&1); rc=$?
            c=$(verdict $rc "$W/$name.hooks.log")
            [ $rc = 124 ] && c="timeout"
        fi
        note=$(grep -m1 -iE 'PASS|Test passed|Result' "$W/$name.slate.log" | cut -c1-60)
        printf '%-36s %-10s %-12s %-14s %s\n' "$rel" "$o" "$s" "$c" "$note" >>"$OUT/realworld.txt"
        cp "$W/$name.orig.log" "$OUT/$name.orig.log" 2>/dev/null
        cp "$W/$name.slate.log" "$OUT/$name.slate.log" 2>/dev/null
    done
    cat "$OUT/realworld.txt"
    ;;
*)
    echo "usage: $0 transform|run" >&2
    exit 2
    ;;
esac
