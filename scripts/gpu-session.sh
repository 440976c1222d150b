#!/usr/bin/env bash
# One GPU session (run through the device tool; see docs/GPU.md and
# `make gpu-test`): the steps named in STEPS, with every log kept in
# $OUT/results.tgz and a summary in $OUT/summary.txt, printed last.
#
#   STEPS="diff realworld runtime" ./scripts/gpu-session.sh
#
# Steps: diff (scripts/gpu-diff.sh: build, differential runs), sanitize,
# solo (solo cost), realworld (scripts/realworld.sh run), runtime (the Go
# runtime's GPU tests from .gpu/runtime.test), profile (slatec profile's GPU
# tests from .gpu/profile.test), ncu (scripts/solo-ncu.sh; NCU_FILES
# selects programs), launcher (bench/launcher/run.sh), project
# (scripts/project-check.sh, run), serve (scripts/gpu-serve.sh: the
# slatec serve C++ client on real programs), bench (bench/run.sh,
# not written yet). JSON results are copied to $OUT for bench/results/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/gpu-out}
R=$OUT/results
mkdir -p "$R"
STEPS=${STEPS:-diff realworld runtime profile}
S=$OUT/summary.txt
{
    echo "# slatec GPU session $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -1
} >"$S"
step() { grep -qw "$1" <<<"$STEPS"; }
if step diff; then
    echo "## differential test" >>"$S"
    OUT=$R PHASES="build diff" ./scripts/gpu-diff.sh 2>&1 | tee "$R/diff.log" | grep -E '^gpu-diff:|FAIL' >>"$S"
fi
if step sanitize; then
    echo "## compute-sanitizer" >>"$S"
    OUT=$R PHASES="${SAN_BUILD:-build} sanitize" ./scripts/gpu-diff.sh 2>&1 | tee "$R/sanitize.log" | grep -E '^gpu-diff:|DIRTY|INHERITED' >>"$S"
fi
if step solo; then
    echo "## solo cost" >>"$S"
    OUT=$R PHASES="${SOLO_BUILD:-build} solo" ./scripts/gpu-diff.sh 2>&1 | tee "$R/solo.log" | tail -n 6 >>"$S"
    cp "$R"/solo-*.json "$OUT/" 2>/dev/null
fi
if step ncu; then
    echo "## solo kernel time under ncu" >>"$S"
    OUT=$R FILES="${NCU_FILES:-}" ./scripts/solo-ncu.sh >"$R/ncu.log" 2>&1
    tail -n 3 "$R/solo-ncu.txt" >>"$S" 2>/dev/null
    grep -h geometric "$R/ncu.log" >>"$S"
    cp "$R/solo-ncu.json" "$OUT/" 2>/dev/null
fi
if step launcher; then
    echo "## launcher microbenchmark" >>"$S"
    OUT=$R ./bench/launcher/run.sh >"$R/launcher.log" 2>&1
    cat "$R/launcher.txt" >>"$S" 2>/dev/null || tail -5 "$R/launcher.log" >>"$S"
    cp "$R/launcher.json" "$OUT/" 2>/dev/null
fi
if step serve; then
    echo "## slatec serve (C++ client)" >>"$S"
    OUT=$R ./scripts/gpu-serve.sh >"$R/serve.log" 2>&1
    grep -E '^(gpu-serve|FAIL|BUILD-FAIL|served|cost)' "$R/serve-summary.txt" >>"$S" 2>/dev/null || tail -5 "$R/serve.log" >>"$S"
fi
if step project; then
    echo "## multi-file project" >>"$S"
    SLATEC=.gpu/slatec NVCC=nvcc RUN=1 ./scripts/project-check.sh >>"$S" 2>&1
fi
if step realworld; then
    echo "## real-world sample programs" >>"$S"
    OUT=$R ./scripts/realworld.sh run >"$R/realworld.log" 2>&1
    cat "$R/realworld.txt" >>"$S" 2>/dev/null
fi
if step runtime; then
    echo "## runtime GPU tests" >>"$S"
    if [ -x .gpu/runtime.test ]; then
        OUT=$R ./runtime/gpu-test.sh >"$R/runtime.log" 2>&1
        tail -n 40 "$R/runtime.log" | grep -E '^(---|ok|FAIL|PASS|    |Benchmark|runtime)' | tail -n 30 >>"$S"
    else
        echo "no .gpu/runtime.test (make gpu-build)" >>"$S"
    fi
fi
if step profile; then
    echo "## slatec profile GPU tests" >>"$S"
    if [ -x .gpu/profile.test ]; then
        (cd profile && ../.gpu/profile.test -test.run GPU -test.v) >"$R/profile.log" 2>&1
        grep -E '^(--- |ok|FAIL|PASS)' "$R/profile.log" | tail -n 10 >>"$S"
    else
        echo "no .gpu/profile.test (make gpu-build)" >>"$S"
    fi
fi
if step bench && [ -x bench/run.sh ]; then
    echo "## benchmarks" >>"$S"
    OUT=$R ./bench/run.sh >"$R/bench.log" 2>&1
    tail -n 40 "$R/bench.log" >>"$S"
fi
tar -czf "$OUT/results.tgz" -C "$OUT" results 2>/dev/null && rm -rf "$R"
cat "$S"
