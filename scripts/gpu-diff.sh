#!/usr/bin/env bash
# Differential GPU test of the persistent transform (issue: "GPU proof that
# meaning is kept"). For every testdata kernel file with a host harness, the
# original program and its transformed form (golden/NAME.cu, drop-in mode)
# are built and run; the transformed one under many configurations, with
# every launch counting executions per logical block (each must run exactly
# once); outputs are compared bit for bit (integers) or to the tolerance
# scripts/cmpdump.py states (float records the harness marks tolerant).
#
# Runs on the GPU machine (nvcc, python3, compute-sanitizer). Phases are
# chosen with PHASES (default: "build diff sanitize solo"). Results go to
# $OUT (the device tool brings them back): gpu-diff.txt, sanitize.txt,
# solo.txt and a summary printed last. The diff phase writes each run's
# line to gpu-diff.partial as it ends, so a run cut short by a time limit
# still brings back what it checked; SHARD=K/N runs every Nth of its runs
# from the Kth (1-based), so that the differential splits across calls.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/gpu-out}
W=${W:-/tmp/slatec-gpu}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
PHASES=${PHASES:-build diff sanitize solo}
ONLY=${ONLY:-}                       # restrict to these kernel files (basenames, space-separated)
SHARD=${SHARD:-1/1}                  # diff phase: the Kth of N shares of the runs
JOBS=${JOBS:-$(nproc)}
# Transformed programs launch their workers (the default policy, auto,
# would launch the native kernels when nothing asks to share).
export SLATE_MODE=${SLATE_MODE:-persistent}
mkdir -p "$OUT" "$W"

files=()
for f in testdata/kernels/*.cu; do
    head -1 "$f" | grep -q '^// slatec-test: harness' || continue
    n=$(basename "$f" .cu)
    if [ -n "$ONLY" ] && ! grep -qw "$n" <<<"$ONLY"; then continue; fi
    files+=("$n")
done
echo "gpu-diff: ${#files[@]} harness files"

sms=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)' 2>/dev/null || echo 132)
half=$((sms / 2))
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "gpu-diff: device: $gpu, $sms SMs"

has() { grep -qw "$1" <<<"$PHASES"; }

# ---- build ------------------------------------------------------------------
build_one() {
    n=$1
    flags="-std=c++17 -O2 -arch=$ARCH -Itestdata/include -Itestdata/kernels -lineinfo"
    $NVCC $flags -o "$W/$n.orig" "testdata/kernels/$n.cu" >"$W/$n.build.log" 2>&1 || { echo "BUILD-FAIL $n original"; return; }
    # NO_HOOKS=1: timing only, no instrumented build.
    [ -n "${NO_HOOKS:-}" ] || $NVCC $flags -DSLATE_TEST_HOOKS -Igolden -o "$W/$n.hooks" "golden/$n.cu" >>"$W/$n.build.log" 2>&1 || { echo "BUILD-FAIL $n transformed"; return; }
    # The timed builds: the golden (.env), and, with $SLATEC_FLAGS (e.g.
    # --match-regs sm_90, which needs this machine's nvcc), the input
    # transformed here again with those flags (.cap).
    $NVCC $flags -DSLATE_ENV -Igolden -o "$W/$n.env" "golden/$n.cu" >>"$W/$n.build.log" 2>&1 || { echo "BUILD-FAIL $n transformed(env)"; return; }
    if [ -n "${SLATEC_FLAGS:-}" ]; then
        .gpu/slatec transform $SLATEC_FLAGS -I testdata/include -o "$W/gen/$n.cu" "testdata/kernels/$n.cu" >>"$W/$n.build.log" 2>&1 &&
            $NVCC $flags -Igolden -o "$W/$n.cap" "$W/gen/$n.cu" >>"$W/$n.build.log" 2>&1 || { echo "BUILD-FAIL $n slatec $SLATEC_FLAGS"; return; }
    fi
    echo "BUILD-OK $n"
}
export -f build_one
export NVCC ARCH W SLATEC_FLAGS NO_HOOKS
mkdir -p "$W/gen" && cp golden/*.cuh "$W/gen/"
if has build; then
    printf '%s\n' "${files[@]}" | xargs -P "$JOBS" -I{} bash -c 'build_one {}' >"$OUT/build.txt"
    grep -c BUILD-OK "$OUT/build.txt" | sed 's/^/gpu-diff: built /'
    grep BUILD-FAIL "$OUT/build.txt" && for n in $(grep BUILD-FAIL "$OUT/build.txt" | awk '{print $2}'); do sed 's/^/    /' "$W/$n.build.log" | head -20; done
fi

# ---- diff -------------------------------------------------------------------
# A configuration is a set of environment assignments for the transformed run.
configs=(
    "all|"
    "sm0|SLATE_SM_RANGE=0:0"
    "first-half|SLATE_SM_RANGE=0:$((half - 1))"
    "second-half|SLATE_SM_RANGE=$half:$((sms - 1))"
    "all-iters1|SLATE_ITERS=1"
    "all-iters17|SLATE_ITERS=17"
    "first-half-iters1|SLATE_SM_RANGE=0:$((half - 1)) SLATE_ITERS=1"
    "second-half-iters17|SLATE_SM_RANGE=$half:$((sms - 1)) SLATE_ITERS=17"
    "sm0-iters17|SLATE_SM_RANGE=0:0 SLATE_ITERS=17"
    "retreat-0us|SLATE_SM_RANGE=0:$((half - 1)) SLATE_RETREAT=$half:$((sms - 1)) SLATE_RETREAT_DELAY_US=0"
    "retreat-50us|SLATE_SM_RANGE=0:$((half - 1)) SLATE_RETREAT=$half:$((sms - 1)) SLATE_RETREAT_DELAY_US=50"
    "retreat-1000us-iters1|SLATE_SM_RANGE=$half:$((sms - 1)) SLATE_RETREAT=0:0 SLATE_RETREAT_DELAY_US=1000 SLATE_ITERS=1"
)

diff_one() {
    n=$1 cname=$2 cenv=$3
    d="$W/run/$n.$cname"
    mkdir -p "$d"
    rm -f "$d"/*.bin
    ( cd "$d" && HARNESS_OUT="$d/orig.bin" timeout 120 "$W/$n.orig" >"$d/orig.out" 2>&1 ) || { echo "FAIL $n $cname original-failed(rc=$?)"; return; }
    ( cd "$d" && env $cenv SLATE_COUNT=1 SLATE_LOG=1 HARNESS_OUT="$d/slate.bin" timeout 120 "$W/$n.hooks" >"$d/slate.out" 2>"$d/slate.err" ) || {
        echo "FAIL $n $cname transformed-failed(rc=$?) $(grep -m1 -E 'FAIL|error|slate:' "$d/slate.err" "$d/slate.out" | head -1)"; return; }
    grep -q PASS "$d/slate.out" || { echo "FAIL $n $cname no-PASS-line"; return; }
    cmp_out=$(python3 scripts/cmpdump.py "$d/orig.bin" "$d/slate.bin" 2>&1)
    rc=$?
    cmp=$(tail -1 <<<"$cmp_out")
    if [ $rc = 0 ]; then
        launches=$(grep -c 'slate: launch' "$d/slate.err")
        once=$(grep -c 'ran exactly once' "$d/slate.err")
        retreat=$(grep -m1 'retreat after' "$d/slate.err" | sed 's/.*retreat after \([0-9]*\) of \([0-9]*\).*/\1\/\2/')
        echo "PASS $n $cname launches=$launches counted-once=$once ${retreat:+retreat-at=$retreat} $cmp"
    else
        echo "FAIL $n $cname outputs-differ: $cmp"
    fi
}
export -f diff_one
if has diff; then
    : >"$W/jobs"
    for n in "${files[@]}"; do
        [ -x "$W/$n.hooks" ] || continue
        for c in "${configs[@]}"; do printf '%s\t%s\t%s\n' "$n" "${c%%|*}" "${c#*|}" >>"$W/jobs"; done
    done
    shard_k=${SHARD%/*} shard_n=${SHARD#*/}
    if ! [[ "$shard_k" =~ ^[0-9]+$ && "$shard_n" =~ ^[0-9]+$ ]] || [ "$shard_n" -lt 1 ] || [ "$shard_k" -lt 1 ] ||
        [ "$shard_k" -gt "$shard_n" ]; then
        echo "gpu-diff: SHARD=$SHARD: want K/N with 1 <= K <= N" >&2
        exit 2
    fi
    awk -v k="$shard_k" -v n="$shard_n" '(NR - k) % n == 0' "$W/jobs" >"$W/jobs.shard"
    # One job per line: name, config name, environment. Each result line
    # goes to gpu-diff.partial at once (a run cut short keeps them), and
    # sorted to gpu-diff.txt at the end.
    while IFS=$'\t' read -r n cname cenv; do printf '%s\0%s\0%s\0' "$n" "$cname" "$cenv"; done <"$W/jobs.shard" |
        xargs -0 -n3 -P "$((JOBS / 2 > 1 ? JOBS / 2 : 1))" bash -c 'diff_one "$0" "$1" "$2"' >"$OUT/gpu-diff.partial"
    sort "$OUT/gpu-diff.partial" >"$OUT/gpu-diff.txt" && rm -f "$OUT/gpu-diff.partial"
    echo "gpu-diff: $(grep -c '^PASS' "$OUT/gpu-diff.txt") passed, $(grep -c '^FAIL' "$OUT/gpu-diff.txt") failed of $(wc -l <"$W/jobs.shard") runs$([ "$shard_n" -gt 1 ] && echo " (share $SHARD of $(wc -l <"$W/jobs"))")"
    # Keep the logs of failing runs (at most 20) for diagnosis.
    grep '^FAIL' "$OUT/gpu-diff.txt" | head -20 | while read -r _ n c _; do
        mkdir -p "$OUT/fail/$n.$c" && cp "$W/run/$n.$c"/*.out "$W/run/$n.$c"/*.err "$OUT/fail/$n.$c/" 2>/dev/null
    done
    grep '^FAIL' "$OUT/gpu-diff.txt" | head -40
fi

# ---- sanitize ---------------------------------------------------------------
san_one() {
    n=$1 tool=$2
    d="$W/san/$n.$tool"
    mkdir -p "$d"
    ( cd "$d" && HARNESS_SCALE=small timeout 600 compute-sanitizer --tool "$tool" --error-exitcode 9 "$W/$n.hooks" >"$d/log" 2>&1 )
    rc=$?
    summary=$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$d/log")
    if [ $rc = 0 ]; then echo "CLEAN $n $tool $summary"; return; fi
    # A finding in the input program is not the transform's: run the tool on
    # the original too, and report what both have as INHERITED (counted apart;
    # the log keeps both, and the kinds of errors they report).
    ( cd "$d" && HARNESS_SCALE=small timeout 600 compute-sanitizer --tool "$tool" --error-exitcode 9 "$W/$n.orig" >"$d/orig.log" 2>&1 )
    orc=$?
    if [ $orc != 0 ] && [ "$(san_kinds "$d/log")" = "$(san_kinds "$d/orig.log")" ]; then
        echo "INHERITED $n $tool rc=$rc $summary (original rc=$orc $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$d/orig.log"); kinds: $(san_kinds "$d/log"))"
    else
        echo "DIRTY $n $tool rc=$rc $summary (original rc=$orc)"
    fi
}
# san_kinds LOG: the distinct kinds of findings in a sanitizer log, one line.
san_kinds() {
    grep -E '^========= +(Invalid|Barrier error|Race|Error|Program hit|Uninitialized|Leaked|Hazard|Warning)' "$1" |
        sed -E 's/^=+ +//; s/ (at|of|by) .*//; s/[0-9]+//g' | sort -u | tr '\n' ';'
}
export -f san_one san_kinds
if has sanitize; then
    for n in "${files[@]}"; do
        [ -x "$W/$n.hooks" ] || continue
        for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do printf '%s %s\n' "$n" "$tool"; done
    done | xargs -n2 -P "${SAN_JOBS:-8}" bash -c 'san_one "$0" "$1"' | sort >"$OUT/sanitize.txt"
    echo "gpu-diff: sanitizers: $(grep -c '^CLEAN' "$OUT/sanitize.txt") clean, $(grep -c '^DIRTY' "$OUT/sanitize.txt") dirty, $(grep -c '^INHERITED' "$OUT/sanitize.txt") inherited (the original program has the same findings)"
    grep -E '^(DIRTY|INHERITED)' "$OUT/sanitize.txt" | head -20
    # Keep the logs of what was not clean.
    grep -E '^(DIRTY|INHERITED)' "$OUT/sanitize.txt" | head -20 | while read -r _ n tool _; do
        mkdir -p "$OUT/sanitize-logs" && head -c 20000 "$W/san/$n.$tool/log" >"$OUT/sanitize-logs/$n.$tool.log"
        [ -f "$W/san/$n.$tool/orig.log" ] && head -c 20000 "$W/san/$n.$tool/orig.log" >"$OUT/sanitize-logs/$n.$tool.orig.log"
    done
fi

# ---- solo -------------------------------------------------------------------
# Solo cost: the program's kernels timed with CUDA events by the harness
# ($HARNESS_REPS repetitions after a warm-up, median), original and
# transformed (auto iters, all SMs) alternating, three rounds. MIN_US
# (HARNESS_MIN_US) raises the repetitions of short timers so that each timed
# round lasts at least that long. HOLD=1 (HARNESS_HOLD) holds each round's
# runs behind a gate kernel until all are enqueued: the GPU's time alone,
# not the host's launch rate (4-5 us kernels); timers whose rounds were not
# held are left out by the report.
if has solo; then
    raw=$OUT/solo-raw.txt
    : >"$raw"
    variants="orig env"
    [ -n "${SLATEC_FLAGS:-}" ] && variants="orig env cap"
    for round in $(seq 1 "${ROUNDS:-3}"); do
        for n in "${files[@]}"; do
            [ -x "$W/$n.env" ] || continue
            for v in $variants; do
                [ -x "$W/$n.$v" ] || continue
                HARNESS_HOLD=${HOLD:-} HARNESS_REPS=${REPS:-20} HARNESS_MIN_US=${MIN_US:-} timeout 120 "$W/$n.$v" >"$W/solo.out" 2>/dev/null
                grep -q '^PASS' "$W/solo.out" || echo "$n $v $round SELFCHECK-FAIL" >>"$raw"
                grep -E '^HARNESS_(TIME|HOLD_LATE)' "$W/solo.out" | sed "s/^/$n $v $round /" >>"$raw"
            done
        done
    done
    # The programs' own timings (single launches, no warm-up): plain runs;
    # envL is the transformed build with SLATE_PRELOAD=0 (its workers load
    # lazily at their first launch, as before the first-use preload); with
    # EAGER=1 also under CUDA_MODULE_LOADING=EAGER (variants origE, envE),
    # which loads every kernel before main: the difference then shows what
    # lazy loading adds to the first launch. Each run's whole-process wall
    # time is kept too (PROCESS_TIME), so that a cost moved out of the
    # program's timed region is still seen.
    prog_run() { # NAME VARIANT ROUND BINARY [ENV...]
        local n=$1 v=$2 r=$3 b=$4 t0 t1
        shift 4
        t0=$(date +%s%N)
        env "$@" timeout 120 "$b" >"$W/prog.out" 2>/dev/null
        t1=$(date +%s%N)
        grep '^PROGRAM_TIME' "$W/prog.out" | sed "s/^/$n $v $r /" >>"$raw"
        echo "$n $v $r PROCESS_TIME process $(( (t1 - t0) / 1000 ))e-3" >>"$raw"
    }
    for round in $(seq 1 "${PROG_ROUNDS:-5}"); do
        for n in "${files[@]}"; do
            [ -x "$W/$n.env" ] || continue
            grep -q PROGRAM_TIME "testdata/kernels/$n.cu" || continue
            for v in $variants; do
                [ -x "$W/$n.$v" ] || continue
                prog_run "$n" "$v" "$round" "$W/$n.$v"
            done
            prog_run "$n" envL "$round" "$W/$n.env" SLATE_PRELOAD=0
            if [ -n "${EAGER:-}" ]; then
                for v in orig env; do
                    prog_run "$n" "${v}E" "$round" "$W/$n.$v" CUDA_MODULE_LOADING=EAGER
                done
            fi
        done
    done
    dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    python3 scripts/solo-report.py --json "$OUT" --device "$dev" --commit "${COMMIT:-}" ${HOLD:+--held} "$raw" >"$OUT/solo.txt"
    grep -E 'geometric|^##' "$OUT/solo.txt"
    echo "gpu-diff: $(grep -c SELFCHECK-FAIL "$raw") timed runs failed their self-check"
    grep SELFCHECK-FAIL "$raw" | head
fi
echo "gpu-diff: done"
