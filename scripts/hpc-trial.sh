#!/usr/bin/env bash
# Real-world trial on two multi-file HPC mini-apps written by others, each
# of which checks its own result: ANL-CESAR's XSBench and RSBench (Monte
# Carlo neutron transport cross-section lookups; CUDA ports, 6 .cu files and
# a header each; fetched read-only into .realworld/{xsbench,rsbench}/cuda,
# never committed: SOURCES.txt there lists each file's commit). Each
# program is transformed as a whole, built as published (its Makefile's
# flags, sm_90) and transformed, and run with each of its kernel variants
# and problem sizes; a run passes when the program prints
# "Verification checksum: N (Valid)" and exits 0 (the checksum is the
# sum of every lookup's result). A third build counts executions per
# logical block (-DSLATE_TEST_HOOKS, SLATE_COUNT=1).
#
#   scripts/hpc-trial.sh transform   # here: .realworld/hpc-out/NAME with the slatec binary
#   scripts/hpc-trial.sh run         # on the GPU machine: $OUT/hpc.txt and the logs
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/trial.sh
. scripts/lib/trial.sh
OUTDIR=${OUTDIR:-.realworld/hpc-out}
OUT=${OUT:-$PWD/.work/hpc-out}
# The Makefiles' flags (-std=c++14 there; c++17 builds the same sources).
flags="-Xcompiler -O3 -arch=$ARCH -std=c++17 -O3"

# name | source directory | sources | runs (;-separated argument lists)
programs() {
    cat <<'EOF'
xsbench|.realworld/xsbench/cuda|Main.cu io.cu Simulation.cu GridInit.cu XSutils.cu Materials.cu|-m event -k 0;-m event -s small -k 0
rsbench|.realworld/rsbench/cuda|main.cu simulation.cu io.cu init.cu material.cu utils.cu|-m event -k 0;-m event -k 1;-m event -s small -k 0
EOF
}

case "${1:-}" in
transform)
    trial_outdir
    programs | while IFS='|' read -r name src files runs; do
        [ -d "$src" ] || { echo "$name: $src missing (fetch it first)"; continue; }
        # From inside the source directory: the outputs keep its layout.
        # shellcheck disable=SC2086
        if (cd "$src" && "$slatec" transform -o "$outdir/$name" $files *.cuh) 2>"$OUTDIR/$name.log"; then
            echo "transformed $name: $(cat "$OUTDIR/$name"/*.cu | grep -c '__slate(slate_ctl') kernels"
        else
            echo "REFUSED $name: $(grep -m1 error: "$OUTDIR/$name.log")"
        fi
    done
    ;;
run)
    mkdir -p "$OUT"
    W=/tmp/slatec-hpc
    rm -rf "$W"
    mkdir -p "$W"
    build() { # NAME SRCDIR OUTNAME EXTRA FILES...
        local name=$1 dir=$2 bin=$3 extra=$4
        shift 4
        local objs=()
        for f in "$@"; do
            # shellcheck disable=SC2086
            $NVCC $flags $extra -I"$dir" -c "$dir/$f" -o "$W/$bin.${f%.cu}.o" || return 1
            objs+=("$W/$bin.${f%.cu}.o")
        done
        # shellcheck disable=SC2086
        $NVCC $flags "${objs[@]}" -o "$W/$bin" -lm
    }
    # Not a pipe: the loop runs in this shell, so wait sees its builds.
    while IFS='|' read -r name src files runs; do
        # shellcheck disable=SC2086
        build "$name" "$src" "$name.orig" "" $files >"$W/$name.orig.build" 2>&1 &
        # shellcheck disable=SC2086
        build "$name" "$OUTDIR/$name" "$name.slate" "" $files >"$W/$name.slate.build" 2>&1 &
        # shellcheck disable=SC2086
        build "$name" "$OUTDIR/$name" "$name.hooks" "-DSLATE_TEST_HOOKS" $files >"$W/$name.hooks.build" 2>&1 &
    done < <(programs)
    wait
    printf '%-8s %-28s %-10s %-12s %-10s %s\n' program args original transformed counted "runtime s orig -> transformed" >"$OUT/hpc.txt"
    verdict() { # rc log
        if [ "$1" = 0 ] && grep -q '(Valid)' "$2"; then echo PASS; else echo "FAIL($1)"; fi
    }
    programs | while IFS='|' read -r name src files runs; do
        IFS=';' read -ra arglist <<<"$runs"
        i=0
        for args in "${arglist[@]}"; do
            i=$((i + 1))
            row=()
            for b in orig slate hooks; do
                log="$W/$name.$i.$b.log"
                if [ ! -x "$W/$name.$b" ]; then
                    row+=("nobuild")
                    continue
                fi
                # shellcheck disable=SC2086
                (cd "$W" && SLATE_COUNT=$([ $b = hooks ] && echo 1 || echo 0) timeout 300 "./$name.$b" $args >"$log" 2>&1)
                row+=("$(verdict $? "$log")")
            done
            to=$(grep -m1 -oE 'Runtime: +[0-9.]+' "$W/$name.$i.orig.log" 2>/dev/null | grep -oE '[0-9.]+$')
            ts=$(grep -m1 -oE 'Runtime: +[0-9.]+' "$W/$name.$i.slate.log" 2>/dev/null | grep -oE '[0-9.]+$')
            printf '%-8s %-28s %-10s %-12s %-10s %s\n' "$name" "$args" "${row[0]}" "${row[1]}" "${row[2]}" "${to:+$to -> $ts}" >>"$OUT/hpc.txt"
        done
    done
    tar cJf "$OUT/hpc-logs.tar.xz" -C "$W" $(cd "$W" && ls | grep -E '\.(log|build)$')
    cat "$OUT/hpc.txt"
    ;;
*)
    echo "usage: $0 transform|run" >&2
    exit 2
    ;;
esac
