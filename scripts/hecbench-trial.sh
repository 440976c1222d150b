#!/usr/bin/env bash
# Real-world trial on 30 programs of zjin-lcf/HeCBench (CUDA ports of
# kernels from many sources — ML layers, signal processing, physics,
# cryptography — none of them NVIDIA's samples or Rodinia; fetched
# read-only into .realworld/hecbench/NAME-cuda, never committed:
# SOURCES-A.txt and SOURCES-B.txt there list each file's commit). Each
# program checks its own results (PASS/FAIL lines, or an exit code). Each
# is transformed as a whole, built as published (its Makefile's flags, for
# sm_90) and transformed, and run with the Makefile's arguments (repeat
# counts lowered); the transformed run passes when it exits as the original
# does and prints as many PASS and failure lines (rcN/pP/fF in the table). A third build counts
# executions per logical block (-DSLATE_TEST_HOOKS, SLATE_COUNT=1).
#
#   scripts/hecbench-trial.sh transform   # here: .realworld/hecbench-out/NAME with the slatec binary
#   scripts/hecbench-trial.sh run         # on the GPU machine: $OUT/hecbench.txt and the logs
#
# Knobs: ONLY=REGEX picks programs, JOBS parallel builds (16), DEADLINE
# seconds after which no program starts (86400).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/trial.sh
. scripts/lib/trial.sh
SRC=${SRC:-.realworld/hecbench}
OUTDIR=${OUTDIR:-.realworld/hecbench-out}
OUT=${OUT:-$PWD/.work/hecbench-out}
flags="-std=c++17 -O3 -arch=$ARCH"

# name | extra nvcc flags | runs (;-separated argument lists)
programs() {
    cat <<'EOF'
softmax|--use_fast_math|100000 784 0 100;100000 784 1 100
layernorm|-I../rmsnorm-cuda|8 1024 768 100;8 1024 12288 100
attention||65536 2048 0 100;65536 2048 1 100;65536 2048 2 100;65536 2048 3 100;8192 8192 0 100
pool||128 48 224 224 54 54 10
extrema||10
chi2||4000 400000 2000 2000 256 10
bsearch|-DDEBUG|8388608 10
knn||10
nonzero||2048 2048 10
stencil1d||134217728 10
jacobi||
page-rank|-Xcompiler -fopenmp|-n 20000 -i 100
haccmk||100
tensorT||10
dense-embedding||100000 256 100
ace|-DVERIFY -Xcompiler -fopenmp|100
aidw|-Xcompiler -fopenmp --use_fast_math|100 1 10
all-pairs-distance||10000
bilateral|-Xcompiler -fopenmp|2960 1440 0.5 0.5 100
bspline-vgh||
damage||50000000 100
epistasis||146 4000 10
kalman||1000 100 3 100
lebesgue||1000000 2
lif||1000 1000 400
lombscargle||10
matrix-rotate||5000 10
md5hash||1 4
nlll||2048 1000 100
nqueen||15 7 10
EOF
}

sources() { (cd "$1" && ls ./*.cu ./*.cpp 2>/dev/null | sed 's|^\./||'); }

case "${1:-}" in
transform)
    trial_outdir
    programs | while IFS='|' read -r name extra runs; do
        dir="$SRC/$name-cuda"
        [ -d "$dir" ] || { echo "$name: $dir missing (fetch it first)"; continue; }
        # From inside the program's directory: the outputs keep its layout
        # (an existing directory: -o names a directory even for one input).
        mkdir -p "$outdir/$name"
        # shellcheck disable=SC2046
        if (cd "$dir" && "$slatec" transform -I ../rmsnorm-cuda -o "$outdir/$name" $(ls ./*.cu ./*.cpp ./*.h ./*.cuh 2>/dev/null)) 2>"$OUTDIR/$name.log"; then
            echo "transformed $name: $(cat "$OUTDIR/$name"/* | grep -c '__slate(slate_ctl') kernels"
        else
            echo "REFUSED $name: $(grep -m1 error: "$OUTDIR/$name.log")"
        fi
    done
    ;;
run)
    mkdir -p "$OUT"
    W=/tmp/slatec-hecbench
    rm -rf "$W"
    mkdir -p "$W"
    build() { # NAME SRCDIR FORM EXTRA...: $W/NAME.FORM from every source in SRCDIR
        local name=$1 dir=$2 form=$3
        shift 3
        local objs=() f
        for f in $(sources "$dir"); do
            # shellcheck disable=SC2068
            (cd "$dir" && $NVCC $flags $@ -c "$f" -o "$W/$name.$form.${f%.*}.o") || return 1
            objs+=("$W/$name.$form.${f%.*}.o")
        done
        # shellcheck disable=SC2068
        $NVCC $flags $@ "${objs[@]}" -o "$W/$name.$form" -lm
    }
    # Not a pipe: the loop runs in this shell, so wait sees its builds.
    while IFS='|' read -r name extra runs; do
        [[ $name =~ ${ONLY:-.} ]] || continue
        while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-16}" ]; do wait -n; done
        # shellcheck disable=SC2086
        build "$name" "$SRC/$name-cuda" orig $extra >"$W/$name.orig.build" 2>&1 &
        # shellcheck disable=SC2086
        build "$name" "$OUTDIR/$name" slate $extra -I"$(realpath "$SRC/rmsnorm-cuda" 2>/dev/null || echo .)" >"$W/$name.slate.build" 2>&1 &
        # shellcheck disable=SC2086
        build "$name" "$OUTDIR/$name" hooks $extra -DSLATE_TEST_HOOKS -I"$(realpath "$SRC/rmsnorm-cuda" 2>/dev/null || echo .)" >"$W/$name.hooks.build" 2>&1 &
    done < <(programs)
    wait
    printf '%-20s %-32s %-24s %-16s %-16s %s\n' program args original transformed counted "wall ms orig -> transformed" >"$OUT/hecbench.txt"
    # A run's signature: its exit status, its PASS lines and its failure
    # lines; the transformed runs must have the original's.
    signature() { # rc log
        echo "rc$1/p$(grep -c PASS "$2")/f$(grep -cE 'FAIL|Mismatch|incorrect result' "$2")"
    }
    programs | while IFS='|' read -r name extra runs; do
        [[ $name =~ ${ONLY:-.} ]] || continue
        if [ "$SECONDS" -ge "${DEADLINE:-86400}" ]; then
            printf '%-20s not run: DEADLINE reached\n' "$name" >>"$OUT/hecbench.txt"
            continue
        fi
        IFS=';' read -ra arglist <<<"${runs:- }"
        i=0
        for args in "${arglist[@]}"; do
            i=$((i + 1))
            row=() wall=()
            for form in orig slate hooks; do
                log="$W/$name.$i.$form.log"
                if [ ! -x "$W/$name.$form" ]; then
                    row+=("nobuild")
                    continue
                fi
                t0=$(date +%s%N)
                # shellcheck disable=SC2086
                (cd "$W" && SLATE_COUNT=$([ "$form" = hooks ] && echo 1 || echo 0) timeout 300 "./$name.$form" $args >"$log" 2>&1)
                rc=$?
                wall+=("$((($(date +%s%N) - t0) / 1000000))")
                row+=("$(signature $rc "$log")")
            done
            # The transformed and counted runs must read as the original
            # does; an original that fails as published is marked so.
            o=${row[0]} s=SAME c=SAME
            [[ $o == rc0/p*/f0 ]] || o="$o(fails as published)"
            [ "${row[1]}" = "${row[0]}" ] || s="DIFF(${row[1]})"
            [ "${row[2]}" = "${row[0]}" ] || c="DIFF(${row[2]})"
            printf '%-20s %-32s %-24s %-16s %-16s %s\n' "$name" "${args:--}" "$o" "$s" "$c" "${wall[0]:-} -> ${wall[1]:-}" >>"$OUT/hecbench.txt"
        done
    done
    tar cJf "$OUT/hecbench-logs.tar.xz" -C "$W" $(cd "$W" && ls | grep -E '\.(log|build)$')
    cat "$OUT/hecbench.txt"
    ;;
*)
    echo "usage: $0 transform|run" >&2
    exit 2
    ;;
esac
