#!/usr/bin/env bash
# A/B of two versions of the workers on the GPU machine, in one run: the
# goldens in $OLD (copies of golden/*.cu from an earlier commit, made here:
#   mkdir -p .ab && for f in sgemm_tiled vector_add; do git show REV:golden/$f.cu >.ab/$f.cu; done
# and carried as untracked files) built beside the current goldens of the
# gpu-diff build in $W (PHASES=build ./scripts/gpu-diff.sh first), each
# timed by its own harness (HARNESS_REPS=$REPS, GPU time per run) under the
# variants below, with the original program once per round.
# The original runs under the variants named in $ORIG_VARIANTS (default:
# static), e.g. VARIANTS='static| held|HARNESS_HOLD=1' ORIG_VARIANTS='static
# held' times everything also with the host's launch rate out of the way.
# A variant is NAME|SETTINGS, settings separated by commas
# (q4|SLATE_ITERS=4,HARNESS_HOLD=1).
# Prints lines "round program variant build HARNESS_TIME label median min"
# (and "... HARNESS_HOLD_LATE label" where a held round was not held).
set -uo pipefail
cd "$(dirname "$0")/.."
W=${W:-/tmp/slatec-gpu}
OLD=${OLD:-.ab}
REPS=${REPS:-20}
ROUNDS=${ROUNDS:-2}
NVCC=${NVCC:-nvcc}
VARIANTS=${VARIANTS:-"static| q1|SLATE_ITERS=1 q4|SLATE_ITERS=4 part|SLATE_SM_RANGE=0:130 half|SLATE_SM_RANGE=0:65"}
ORIG_VARIANTS=" ${ORIG_VARIANTS:-static} "
flags="-std=c++17 -O2 -arch=sm_90 -Itestdata/include -Itestdata/kernels -lineinfo -DSLATE_ENV -Igolden"
for f in "$OLD"/*.cu; do
    n=$(basename "$f" .cu)
    $NVCC $flags -o "$W/$n.old" "$f" || echo "BUILD-FAIL $n old" >&2 &
done
wait
for r in $(seq 1 "$ROUNDS"); do
    for f in "$OLD"/*.cu; do
        n=$(basename "$f" .cu)
        for v in $VARIANTS; do
            vn=${v%%|*} ve=${v#*|} ve=${ve//,/ } # commas separate a variant's settings
            for b in orig old env; do
                [ $b = orig ] && [[ "$ORIG_VARIANTS" != *" $vn "* ]] && continue
                (cd /tmp && env $ve SLATE_MODE=persistent HARNESS_REPS=$REPS timeout 60 "$W/$n.$b" 2>/dev/null |
                    grep -E 'HARNESS_(TIME|HOLD_LATE)' | sed "s/^/$r $n $vn $b /")
            done
        done
    done
done
