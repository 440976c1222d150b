#!/usr/bin/env bash
# GPU proof and benchmark of the merged (Liang) scheduler (issue: "The Liang merged
# scheduler: leaky-bucket interleaving, slatec merge, and its GPU proof").
#
# For every merge under golden/merge/ (pairs and triples of testdata kernels, each in
# every mode) a driver from bench/merge/ is built around the merged file. It can run the
# original kernels one after another, or the merged kernel; both dump their outputs
# (testdata/include/harness.h), and scripts/cmpdump.py compares them: bit for bit, or to
# its tolerance for records marked tolerant. The merged kernel runs under several SM
# allocations and task sizes, three times per run (control blocks and maps are reused),
# and under compute-sanitizer memcheck, racecheck and synccheck. The benchmark times the
# merged kernel over the allocation sweep of Liang et al.'s Fig. 2 next to the kernels run
# sequentially and on concurrent streams.
#
# Runs on the GPU machine (nvcc, python3, compute-sanitizer). Phases (PHASES, default
# "build check sanitize bench"):
#   build     compile the drivers (skipped when a binary is newer than its sources; the
#             check binaries with -fmad=false, see below)
#   check     differential runs          -> $OUT/check.txt
#   sanitize  compute-sanitizer          -> $OUT/sanitize.txt
#   bench     timings                    -> $OUT/bench-raw.txt, $OUT/bench.txt, $OUT/merge.json
#   plan      the planner's choice timed -> "planned" rows added to the three above; needs
#             the carried .gpu/slatec (make gpu-build) for slatec profile and slatec plan
#   ncu       Nsight Compute per launch, separate kernels vs merged modes -> ncu-*.csv
# $OUT/summary.txt gets the verdicts and is printed last. ONLY="case ..." restricts the
# cases; BENCH_CASES the benchmarked ones; BENCH_REPS, BENCH_WARMUP, SWEEP_STEP tune the
# timing (bench/merge/common.h).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/merge-gpu}
W=${W:-/tmp/slatec-merge}
NVCC=${NVCC:-nvcc}
# Extra nvcc flags, e.g. -L DIR where a pip-installed toolkit keeps libcudart_static.a in lib/.
NVCC_FLAGS=${NVCC_FLAGS:-}
ARCH=${ARCH:-sm_90}
PHASES=${PHASES:-build check sanitize bench}
JOBS=${JOBS:-$(nproc)}
ONLY=${ONLY:-}
BENCH_CASES=${BENCH_CASES:-sgemm_hist sgemm_vecadd bs_vecadd bs_vecadd_cap transpose_reduce_hist triad_fma triad_sgemm}
# Cases whose kernels are complementary by construction (merge.json's "complementary").
COMPLEMENTARY=${COMPLEMENTARY:-triad_fma triad_sgemm}
mkdir -p "$OUT" "$W"
S=$OUT/summary.txt
has() { grep -qw "$1" <<<"$PHASES"; }

# case, driver, modes. split: one worker population per kernel (its own registers, block
# and shared memory) on its own SM range; *_cap: the merged kernel's registers capped
# (--maxnreg); triad_*: complementary pairs (bench/merge/kernels/complementary.cu).
all_cases=(
    "sgemm_hist sgemm_hist interleaved persistent smrange split"
    "sgemm_hist_apart sgemm_hist interleaved"
    "sgemm_vecadd sgemm_vecadd interleaved persistent smrange split"
    "bs_vecadd bs_vecadd interleaved persistent smrange split"
    "bs_vecadd_cap bs_vecadd persistent smrange split"
    "transpose_reduce_hist transpose_reduce_hist interleaved persistent smrange split"
    "early_transpose early_transpose interleaved persistent smrange split"
    "templates templates interleaved persistent smrange split"
    "triad_fma triad_fma interleaved persistent smrange split"
    "triad_sgemm triad_sgemm interleaved persistent smrange split"
)
cases=()
for c in "${all_cases[@]}"; do
    n=${c%% *}
    if [ -n "$ONLY" ] && ! grep -qw "$n" <<<"$ONLY"; then continue; fi
    cases+=("$c")
done
{
    echo "# slatec merge GPU session $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
    "$NVCC" --version | tail -1
} >"$S"

# ---- build --------------------------------------------------------------------
# Two binaries per merge: NAME.MODE for check and sanitize, built with -fmad=false so
# that floating-point results do not depend on where the compiler contracts a*b+c into
# an FMA (the merged kernel inlines the bodies in a different context from the
# separate kernels); NAME.MODE.bench with the default flags, for timing.
build_one() {
    local name=$1 driver=$2 mode=$3 variant=$4
    local bin=$W/$name.$mode src=golden/merge/$name.$mode.cu flags="-fmad=false"
    if [ "$variant" = bench ]; then bin=$bin.bench flags=""; fi
    if [ -x "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt "bench/merge/$driver.cu" ] && [ "$bin" -nt bench/merge/common.h ]; then
        echo "BUILD-OK $name.$mode $variant (cached)"; return
    fi
    if "$NVCC" -std=c++17 -O3 -arch="$ARCH" -lineinfo $flags $NVCC_FLAGS -Itestdata/include -I. -DSLATE_ENV \
        -DMERGE_MODE="\"$mode\"" -DMERGED="\"$src\"" -o "$bin" "bench/merge/$driver.cu" >"$bin.log" 2>&1; then
        echo "BUILD-OK $name.$mode $variant"
    else
        echo "BUILD-FAIL $name.$mode $variant"; sed 's/^/    /' "$bin.log" | head -20
    fi
}
export -f build_one
export NVCC NVCC_FLAGS ARCH W
if has build; then
    variants=""
    { has check || has sanitize || has ncu; } && variants="check"
    { has bench || has plan; } && variants="$variants bench"
    # PHASES=build alone (e.g. on a machine without a GPU): build every variant.
    [ -z "$variants" ] && variants="check bench"
    for c in "${cases[@]}"; do
        read -r name driver modes <<<"$c"
        for m in $modes; do
            for v in $variants; do
                [ "$v" = bench ] && ! grep -qw "$name" <<<"$BENCH_CASES" && continue
                printf '%s %s %s %s\n' "$name" "$driver" "$m" "$v"
            done
        done
    done | xargs -r -n4 -P "$JOBS" bash -c 'build_one "$0" "$1" "$2" "$3"' >"$OUT/build.txt"
    echo "## build: $(grep -c '^BUILD-OK' "$OUT/build.txt") built, $(grep -c '^BUILD-FAIL' "$OUT/build.txt") failed" | tee -a "$S"
    grep -A20 '^BUILD-FAIL' "$OUT/build.txt" | tee -a "$S"
fi

# ---- check --------------------------------------------------------------------
# Each merged run is compared with the separate kernels' dump. Allocations: the one
# slatec was given, an equal share, the extremes, and more SMs than the device has
# (smrange scales them down). Task sizes and stealing for the worker modes.
check_one() {
    local name=$1 mode=$2 alloc=$3 env=$4
    local bin=$W/$name.$mode d=$W/check/$name
    local tag="$name.$mode alloc=$alloc${env:+ $env}"
    local out=$d/$mode.$alloc.$(echo "$env" | tr ' =' '__').bin
    rm -f "$out"
    if ! (cd "$d" && env $env HARNESS_OUT="$out" timeout 300 "$bin" check merged "$alloc" >"$out.log" 2>&1); then
        echo "FAIL $tag merged-run-failed: $(grep -m1 -iE 'error|fail' "$out.log")"; return
    fi
    local cmp rc
    cmp=$(python3 scripts/cmpdump.py "$d/sep.bin" "$out" 2>&1); rc=$?
    if [ $rc = 0 ]; then echo "PASS $tag $(tail -1 <<<"$cmp")"; else echo "FAIL $tag outputs-differ: $(tail -3 <<<"$cmp" | tr '\n' ' ')"; fi
}
export -f check_one
if has check; then
    : >"$W/check-jobs"
    for c in "${cases[@]}"; do
        read -r name driver modes <<<"$c"
        first=$(awk '{print $1}' <<<"$modes")
        [ -x "$W/$name.$first" ] || continue
        mkdir -p "$W/check/$name"
        rm -f "$W/check/$name/sep.bin"
        if ! (cd "$W/check/$name" && HARNESS_OUT="$W/check/$name/sep.bin" timeout 300 "$W/$name.$first" check sep >sep.log 2>&1); then
            echo "FAIL $name separate-run-failed" >>"$W/check-jobs.fail"; continue
        fi
        for m in $modes; do
            [ -x "$W/$name.$m" ] || continue
            envs=("")
            case $m in
                persistent) envs=("" "SLATE_ITERS=1" "SLATE_ITERS=17" "SLATE_ITERS=period") ;;
                smrange | split) envs=("" "SLATE_ITERS=1" "SLATE_MERGED_STEAL=1" "SLATE_MERGED_STEAL=1 SLATE_ITERS=5") ;;
            esac
            for a in default equal min0 max0 500,500,500; do
                for e in "${envs[@]}"; do printf '%s\t%s\t%s\t%s\n' "$name" "$m" "$a" "$e" >>"$W/check-jobs"; done
            done
        done
    done
    while IFS=$'\t' read -r n m a e; do printf '%s\0%s\0%s\0%s\0' "$n" "$m" "$a" "$e"; done <"$W/check-jobs" |
        xargs -r -0 -n4 -P "$((JOBS / 2 > 1 ? JOBS / 2 : 1))" bash -c 'check_one "$0" "$1" "$2" "$3"' | sort >"$OUT/check.txt"
    [ -f "$W/check-jobs.fail" ] && cat "$W/check-jobs.fail" >>"$OUT/check.txt" && rm -f "$W/check-jobs.fail"
    echo "## check: $(grep -c '^PASS' "$OUT/check.txt") passed, $(grep -c '^FAIL' "$OUT/check.txt") failed" | tee -a "$S"
    grep '^FAIL' "$OUT/check.txt" | head -40 | tee -a "$S"
fi

# ---- sanitize -----------------------------------------------------------------
san_one() {
    local name=$1 mode=$2 tool=$3
    local d=$W/san/$name.$mode.$tool
    mkdir -p "$d"
    (cd "$d" && HARNESS_SCALE=small timeout 900 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$W/$name.$mode" check merged default >"$d/log" 2>&1)
    local rc=$? summary
    summary=$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$d/log")
    if [ $rc = 0 ]; then echo "CLEAN $name.$mode $tool $summary"; else echo "DIRTY $name.$mode $tool rc=$rc $summary"; fi
}
export -f san_one
if has sanitize; then
    if ! command -v compute-sanitizer >/dev/null; then
        echo "## sanitize: compute-sanitizer not found, skipped" | tee -a "$S"
    else
        for c in "${cases[@]}"; do
            read -r name driver modes <<<"$c"
            for m in $modes; do
                [ -x "$W/$name.$m" ] || continue
                for tool in memcheck racecheck synccheck; do printf '%s %s %s\n' "$name" "$m" "$tool"; done
            done
        done | xargs -r -n3 -P 4 bash -c 'san_one "$0" "$1" "$2"' | sort >"$OUT/sanitize.txt"
        echo "## sanitize: $(grep -c '^CLEAN' "$OUT/sanitize.txt") clean, $(grep -c '^DIRTY' "$OUT/sanitize.txt") dirty" | tee -a "$S"
        grep '^DIRTY' "$OUT/sanitize.txt" | head -20 | tee -a "$S"
    fi
fi

# write_report turns $OUT/bench-raw.txt into bench.txt and the rows in the shape of
# bench/results/merge.json (schema: bench/results/merge.schema.json).
write_report() {
    python3 scripts/merge-bench-report.py "$OUT/bench-raw.txt" >"$OUT/bench.txt"
    local gpu
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    python3 scripts/merge-bench-report.py --json "$OUT/merge.json" --device "${gpu:-unknown}" \
        --commit "$(built=$("${SLATEC:-.gpu/slatec}" --version 2>/dev/null | sed -n 's/.*(commit \([0-9a-f]*\(-dirty\)\{0,1\}\)).*/\1/p'); echo "${built:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}")" --complementary "$COMPLEMENTARY" \
        "$OUT/bench-raw.txt" >/dev/null
}

# ---- bench --------------------------------------------------------------------
# One binary at a time (timings need the GPU to themselves).
if has bench; then
    : >"$OUT/bench-raw.txt"
    for c in "${cases[@]}"; do
        read -r name driver modes <<<"$c"
        grep -qw "$name" <<<"$BENCH_CASES" || continue
        first=yes
        for m in $modes; do
            [ -x "$W/$name.$m.bench" ] || continue
            args=bench
            [ $first = yes ] && args="bench baselines"
            first=no
            BENCH_CASE=$name timeout 600 "$W/$name.$m.bench" $args >>"$OUT/bench-raw.txt" 2>"$W/$name.$m.bench.err" ||
                echo "BENCH-FAIL $name $m $(head -1 "$W/$name.$m.bench.err")" | tee -a "$S"
        done
    done
    write_report
    echo "## bench rows: $OUT/merge.json (copy to bench/results/merge.json)" >>"$S"
    echo "## bench ($OUT/bench.txt)" >>"$S"
    grep -E '^(case|  best|  baselines|  merged)' "$OUT/bench.txt" >>"$S"
fi
# ---- plan ---------------------------------------------------------------------
# The planner's choice, timed: each kernel of a case profiled on this GPU (`slatec
# profile`, the carried .gpu/slatec, sizes from bench/merge/profile-specs.tsv), then
# `slatec plan --algo stm`: one phase with every kernel and a recommended merge -> the
# interleaved merged kernel on the plan's SMs ("planned" row); kernels in phases of
# their own -> sequential; a co-run phase the merge model advises against -> streams.
# Appends to $OUT/bench-raw.txt and rewrites bench.txt and merge.json.
SLATEC=${SLATEC:-.gpu/slatec}
if has plan; then
    # slatec profile compiles with NVRTC: the toolkit's library and headers
    # (libcu++ for the <cstdint> the device-only output maps to).
    # shellcheck source=scripts/nvrtc-env.sh
    . scripts/nvrtc-env.sh
    mkdir -p "$W/plan"
    [ -f "$OUT/bench-raw.txt" ] || : >"$OUT/bench-raw.txt"
    for name in $(grep -v '^#' bench/merge/profile-specs.tsv | cut -f1 | uniq); do
        grep -qw "$name" <<<"$BENCH_CASES" || continue
        if [ -n "$ONLY" ] && ! grep -qw "$name" <<<"$ONLY"; then continue; fi
        prof=$W/plan/$name.profile.json
        rm -f "$prof"
        ok=yes
        while IFS=$'\t' read -r c f k b g sh bpb args; do
            [ "$c" = "$name" ] || continue
            "$SLATEC" profile "$f" -I testdata/include --kernel "$k" --block "$b" --grid "$g" --shmem "$sh" \
                --bytes-per-block "$bpb" --args "$args" --sms "${PLAN_SMS:-step:4}" --reps 3 \
                -o "$prof" --append >>"$W/plan/$name.profile.log" 2>&1 || { ok=no; break; }
        done < <(grep -v '^#' bench/merge/profile-specs.tsv)
        if [ $ok = no ]; then
            echo "PLAN-FAIL $name profile: $(tail -3 "$W/plan/$name.profile.log" | tr '\n' ' ')" | tee -a "$S"
            continue
        fi
        cp "$prof" "$OUT/profile-$name.json"
        if ! "$SLATEC" plan "$prof" --algo stm --json >"$W/plan/$name.plan.json" 2>"$W/plan/$name.plan.log"; then
            echo "PLAN-FAIL $name plan: $(head -3 "$W/plan/$name.plan.log" | tr '\n' ' ')" | tee -a "$S"
            continue
        fi
        order=$(grep -v '^#' bench/merge/profile-specs.tsv | awk -F'\t' -v c="$name" '$1 == c { print $3 }' | paste -sd' ')
        choice=$(python3 - "$W/plan/$name.plan.json" $order <<'PY'
import json, sys
plan, order = json.load(open(sys.argv[1])), sys.argv[2:]
phases = plan["phases"]
if len(phases) == 1 and len(phases[0]["kernels"]) == len(order) and (phases[0].get("merge") or {}).get("recommended"):
    # The interleaved kernel takes dispatch shares (merge_shares), not SMs.
    ks = phases[0]["kernels"]
    shares = phases[0].get("merge_shares") or [k["sms"] for k in ks]
    alloc = {k["name"]: s for k, s in zip(ks, shares)}
    print("merge " + ",".join(str(alloc[k]) for k in order))
elif all(len(p["kernels"]) == 1 for p in phases):
    print("sequential")
else:
    print("streams")
PY
)
        echo "## plan $name: $choice (predicted $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["predicted_ms"])' "$W/plan/$name.plan.json") ms)" | tee -a "$S"
        case "$choice" in
        merge\ *)
            BENCH_CASE=$name timeout 300 "$W/$name.interleaved.bench" bench planned "${choice#merge }" >>"$OUT/bench-raw.txt" 2>"$W/plan/$name.bench.err" ||
                echo "PLAN-FAIL $name bench: $(head -1 "$W/plan/$name.bench.err")" | tee -a "$S" ;;
        sequential | streams)
            echo "BENCH $name - planned-baseline $choice" >>"$OUT/bench-raw.txt" ;;
        *)
            echo "PLAN-FAIL $name: no choice" | tee -a "$S" ;;
        esac
    done
    write_report
    grep -E '^(case|  planned)' "$OUT/bench.txt" >>"$S"
fi
# ---- ncu ----------------------------------------------------------------------
# Why a merged mode loses, per kernel launch, under Nsight Compute: the separate
# kernels (check sep) against each merged mode (check merged, at NCU_ALLOC, default
# the driver's default allocation): duration, registers, achieved occupancy and its
# limiters, SM and DRAM throughput. NCU_CASES (default: the three that lose merged)
# and NCU_MODES (default "interleaved split") choose. Needs the check binaries
# (PHASES='build ncu').
if has ncu; then
    NCU=${NCU:-ncu}
    metrics=gpu__time_duration.sum,launch__registers_per_thread,launch__block_size,launch__grid_size
    metrics=$metrics,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps
    metrics=$metrics,launch__occupancy_limit_blocks,sm__warps_active.avg.pct_of_peak_sustained_active
    metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
    ncu_modes=${NCU_MODES:-interleaved split}
    for name in ${NCU_CASES:-sgemm_hist bs_vecadd transpose_reduce_hist}; do
        for m in $ncu_modes; do
            [ -x "$W/$name.$m" ] || { echo "NCU-SKIP $name $m: no check binary" | tee -a "$S"; continue; }
            d="$W/ncu/$name"
            mkdir -p "$d"
            if [ "$m" = "${ncu_modes%% *}" ]; then
                (cd "$d" && HARNESS_OUT="$d/sep.bin" timeout 600 "$NCU" --metrics "$metrics" --csv "$W/$name.$m" check sep) \
                    >"$OUT/ncu-$name-sep.csv" 2>"$d/sep.err" || echo "NCU-FAIL $name sep: $(tail -1 "$d/sep.err")" | tee -a "$S"
            fi
            (cd "$d" && HARNESS_OUT="$d/$m.bin" timeout 600 "$NCU" --metrics "$metrics" --csv "$W/$name.$m" check merged ${NCU_ALLOC:-default}) \
                >"$OUT/ncu-$name-$m.csv" 2>"$d/$m.err" || echo "NCU-FAIL $name $m: $(tail -1 "$d/$m.err")" | tee -a "$S"
        done
    done
    echo "## ncu: $(ls "$OUT"/ncu-*.csv 2>/dev/null | wc -l) files in $OUT (ncu-CASE-{sep,MODE}.csv)" >>"$S"
fi
cat "$S"
