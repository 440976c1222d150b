#!/usr/bin/env bash
# GPU check of the slatec serve C++ client (docs/SERVE.md, "The C++ client").
# Transformed harnesses (golden/NAME.cu) run in the default policy,
# SLATE_MODE=auto, and are compared with the original programs:
#
#   profiles  (only when named in PHASES) `slatec profile` of each harness's
#             kernel as scripts/serve-profiles.tsv describes it, into
#             $OUT/serve/profiles.json; the daemons of the later phases get
#             `--profiles` with it (unless SERVE_ARGS has a --profiles)
#   host      (only when named in PHASES) bench/host/host_wake.cc: what a
#             wake-up, a clock read and a system call cost on this host
#             (no GPU), into $OUT/host_wake.txt
#   nodaemon  SLATEC_SOCKET names nothing: the programs run natively; the
#             output matches, and the log says "no daemon"
#   served    the daemon (.gpu/slatec serve) runs; harnesses run two processes
#             at a time (three for each of $TRIPLES), $REPS repetitions each,
#             started together at a start line, with SLATE_COUNT=1 (every
#             logical block exactly once, across moves) and SLATE_LOG=1;
#             outputs match; `slatec top --json` is kept after each pair
#             (grant acks: the resize p99)
#   makespan  each pair's span of GPU work (plain builds, started together
#             at a start line), and of each of $TRIPLES (three at once):
#             sequential (one after the other, no daemon), mps (together, no
#             daemon: all native; MPS=1 for real MPS) and serve (together,
#             under the daemon: its default, --unplanned auto) and
#             serve-equal (--unplanned equal; summary and rounds.tsv only),
#             with ALT_ENV serve-env (the same daemon, the programs with
#             these variables too, as 'SLATE_SERVE_QUEUE_US=0'; summary only),
#             with ALT_ARGS serve-alt (a daemon with these flags too, as
#             '--split-hold 0'; summary only; sets of flags separated by
#             '|' run as serve-alt1, serve-alt2, ...),
#             static splits of pairs ($SPLITS); $ROUNDS rounds, modes
#             alternating, median
#   killed    as served, and the daemon is killed (SIGKILL) mid-run: the
#             programs finish on the whole GPU, outputs match
#   cost      host cost per launch: HARNESS_TIME medians of a program built
#             without hooks, natively (no daemon) vs alone under the daemon
#             (protocol v2: native launches); prints served-alone/native
#
# NAMES picks the harnesses (golden/NAME.cu), PAIRS the pairs (a+b ...;
# default: each name with the next), COMPUTE the compute-bound ones
# among them, SERVE_ARGS more flags for every daemon (as `--profiles FILE`,
# so that it plans the pairs it knows). The default harnesses' kernels run
# for microseconds; for pairs whose kernels run for milliseconds (what a
# split can pay for): NAMES='serve_stream_ms serve_fma_ms sgemm_tiled'
# COMPUTE='serve_fma_ms sgemm_tiled' (a STREAM triad over 3 x 256 MB, eight
# launches a run, and four FMA chains of 2048 a thread over 4M threads, two
# launches a run); serve_dep_ms (48 blocks of dependent rsqrt chains,
# latency-bound) makes a triple with the first two:
# TRIPLES='serve_stream_ms+serve_fma_ms+serve_dep_ms' (its names in NAMES).
# scripts/serve-profiles.tsv says how the profiles phase profiles each.
#
# Runs on the GPU machine (nvcc, python3; no Go): `make gpu-build` here first
# and carry .gpu. MPS=1 starts the MPS control daemon (and stops it after).
# Results: $OUT/serve-summary.txt (printed), $OUT/serve/* logs, and
# $OUT/serve.json (issue 13; bench/results/serve.schema.json): makespan rows
# per pair and mode, resize_p99_us (push -> ack, ok grant changes),
# solo_overhead (served-alone/native - 1, the worst timed label).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.work/gpu-out}
W=${W:-/tmp/slatec-serve}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
PHASES=${PHASES:-build nodaemon served makespan killed cost}
NAMES=${NAMES:-saxpy_grid_stride sgemm_tiled black_scholes histogram256 multi_kernel_loop stencil1d_halo reduce_small_grid scan_blelloch}
# Compute-bound harnesses; a pair is "complementary" when exactly one is.
COMPUTE=${COMPUTE:-sgemm_tiled black_scholes}
REPS=${REPS:-30}
ROUNDS=${ROUNDS:-3} # makespan rounds per pair and mode (median kept)
SPLITS=${SPLITS:-}  # makespan of static splits too: "16 28 44" runs A on SMs 0..M-1, B on the rest (split-M rows of the summary)
TRIPLES=${TRIPLES:-} # makespan of three programs at once too: "a+b+c ..." (names among NAMES; rows in serve.json)
SMS=${SMS:-132}    # the GPU's SM count, for split-M (H100 SXM and H200: 132)
SLATEC=${SLATEC:-.gpu/slatec}
unset SLATE_MODE SLATE_SM_RANGE SLATE_ITERS SLATE_RETREAT
mkdir -p "$OUT/serve" "$W"
ROWS="$OUT/serve/rows.tsv" # workload, complementary, mode, makespan_ms (median span)
: >"$ROWS"
: >"$OUT/serve/acks.tsv" # client, epoch, outcome, latency_us, drain_us, native_us, moved, task_us, deliver_us, written_us, woke_us (all pairs)
: >"$OUT/serve/solo.txt"
now_ns() { date +%s%N; }
# built_commit is the commit the carried binaries were built at (the device's
# checkout may not have this session's git history: a run on 2026-11-26
# recorded an older HEAD).
built_commit() {
    local c
    c=$("$SLATEC" --version 2>/dev/null | sed -n 's/.*(commit \([0-9a-f]*\(-dirty\)\{0,1\}\)).*/\1/p')
    echo "${c:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
}
L="$OUT/serve"
S="$OUT/serve-summary.txt"
: >"$S"
say() { echo "$*" | tee -a "$S"; }
has() { grep -qw "$1" <<<"$PHASES"; }
sock="$W/serve.sock"
say "gpu-serve: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); names: $NAMES"
# The host's clock source and cores: a move's host-side parts are wake-ups
# and clock reads (a clock without a vDSO makes every read a system call).
say "gpu-serve: host $(nproc) cores, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"

if [ "${MPS:-}" = 1 ]; then
    nvidia-cuda-mps-control -d && say "gpu-serve: MPS started" || say "gpu-serve: MPS did not start"
fi

daemon_pid=
# start_daemon TAG [FLAGS...]: the daemon on $sock, logging to serve-TAG.log.
start_daemon() {
    local tag=$1
    shift
    rm -f "$sock"
    local extra=()
    read -r -a extra <<<"${SERVE_ARGS:-}"
    "$SLATEC" serve --socket "$sock" --log "$L/serve-$tag.log" "$@" "${extra[@]}" &
    daemon_pid=$!
    for _ in $(seq 50); do [ -S "$sock" ] && return 0; sleep 0.1; done
    say "gpu-serve: daemon did not start"; return 1
}
stop_daemon() { [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; daemon_pid=; }

if has host; then
    if g++ -std=c++17 -O2 -pthread -o "$W/host_wake" bench/host/host_wake.cc; then
        "$W/host_wake" 2000 | tee "$OUT/host_wake.txt" | tee -a "$S"
    else
        say "FAIL host_wake does not build"
    fi
fi

if has profiles; then
    pf="$L/profiles.json"
    rm -f "$pf"
    ok=1
    for n in $NAMES; do
        spec=$(awk -F'\t' -v n="$n" '$1 == n' scripts/serve-profiles.tsv)
        if [ -z "$spec" ]; then say "FAIL $n: no line in scripts/serve-profiles.tsv"; ok=0; continue; fi
        IFS=$'\t' read -r _ k blk grid bpb args <<<"$spec"
        # In the SM order the programs use (the drop-in launcher's: %smid
        # unless SLATE_SM_ORDER=gpc): the DRAM sensitivity is measured beside
        # a stream on the other SMs, and %smid ranges share every GPC's path
        # to L2 where GPC ranges do not.
        SLATEC_SM_ORDER="$([ "${SLATE_SM_ORDER:-id}" = gpc ] && echo gpc || echo id)" \
        "$SLATEC" profile "testdata/kernels/$n.cu" -I testdata/include --kernel "$k" --block "$blk" --grid "$grid" \
            --bytes-per-block "$bpb" --args "$args" --sms "${PROFILE_SMS:-step:4}" -o "$pf" --append \
            >"$L/profile-$n.log" 2>&1 || { say "FAIL $n profile: $(tail -1 "$L/profile-$n.log")"; ok=0; }
    done
    if [ "$ok" = 1 ]; then
        python3 - "$pf" <<'PY' | tee -a "$S"
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    r = k["r_ms"]
    print("profile %s: class %s, R[1] %.3f ms, R[%s] %.3f ms, dram_sensitivity %s" % (k["name"], k.get("class"), r["1"], max(r, key=int), r[max(r, key=int)], k.get("dram_sensitivity")))
PY
        case " ${SERVE_ARGS:-} " in *" --profiles "*) ;; *) SERVE_ARGS="${SERVE_ARGS:-} --profiles $pf" ;; esac
        "$SLATEC" plan "$pf" >"$L/plan.txt" 2>&1
        sed 's/^/    /' "$L/plan.txt" | head -20 | tee -a "$S"
    fi
fi

# The phases that run the programs need their builds: on a fresh machine
# (the device tool's machines go back when idle) they are made first, as if
# PHASES had named build.
programs_built() {
    for n in $NAMES; do
        [ -x "$W/$n.plain" ] && [ -x "$W/$n.hooks" ] && [ -f "$W/$n.orig.bin" ] || return 1
    done
}
if ! has build && { has nodaemon || has served || has makespan || has killed || has cost; } && ! programs_built; then
    say "gpu-serve: no build of the programs in $W (a fresh machine?): building them first"
    PHASES="build $PHASES"
fi

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
        # (harness_dump appends: a warm machine keeps the last call's files.)
        rm -f "$W/$n.orig.bin"
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
        # Served launches' times on their ranges against the client's expected time.
        python3 - "$L/$n.$tag.err" <<'PY' | while read -r line; do say "    $n $tag $line"; done
import re, sys, statistics
rows = [m.groups() for m in re.finditer(r"slate: serve: (\S+) ended on \[(\d+),(\d+)\] after (\d+) us \(expected (\d+) us, (\d+) starved starts", open(sys.argv[1]).read())]
by = {}
for k, lo, hi, us, exp, starts in rows:
    by.setdefault((k, int(hi) - int(lo) + 1), []).append((int(us), int(exp), int(starts)))
for (k, sms), v in sorted(by.items()):
    print("served %s on %d SMs: %d launches, median %d us (expected %d), %d starved starts" % (
        k, sms, len(v), statistics.median(u for u, _, _ in v), statistics.median(e for _, e, _ in v), sum(s for _, _, s in v)))
PY
    else
        say "FAIL $n $tag outputs differ: $(tail -1 <<<"$cmp")"
    fi
}
# run NAME TAG ENV...: one transformed run (hooks build) in the background.
run() {
    local n=$1 tag=$2; shift 2
    rm -f "$W/$n.$tag.bin" # (harness_dump appends)
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

# pairs: the pairs of PAIRS (a+b ..., their names in NAMES), else each
# harness with the next one (the last with the first), two processes at once.
pairs() {
    if [ -n "${PAIRS:-}" ]; then
        local p
        for p in $PAIRS; do echo "${p%%+*} ${p#*+}"; done
        return
    fi
    local a=($NAMES) i
    for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[$i]} ${a[$(((i + 1) % ${#a[@]}))]}"; done
}

if has served; then
    # Equal shares: the served and killed checks need launches on split
    # ranges (the default, overlap, runs unplanned processes natively).
    start_daemon served --unplanned equal && {
        # served_group NAME...: the group's programs at once under the
        # daemon, each checked; the daemon's grant records kept.
        served_group() {
            local w n pids=()
            w=$(IFS=+; echo "$*")
            # All wait at the start line of their first timed phase, so that
            # their launches overlap (a program whose input takes a second to
            # make would otherwise start after the other ended). Tags name
            # the group in its order (two harnesses make a pair twice,
            # mirrored: its files must not be overwritten). Wait on the
            # programs only: a bare wait would also wait for the daemon, a
            # background job of this shell.
            local gate="$W/gate/$w.served"
            rm -rf "$gate"
            for n in "$@"; do
                run "$n" "served-$w" SLATEC_SOCKET="$sock" SLATE_COUNT=1 HARNESS_REPS="$REPS" HARNESS_GATE="$gate:$#" &
                pids+=($!)
            done
            wait "${pids[@]}"
            for n in "$@"; do check "$n" "served-$w"; done
            # the daemon keeps the last 64 grant changes: collect per group
            "$SLATEC" top --json --socket "$sock" >"$L/top-served-$w.json" 2>&1
            python3 - "$L/top-served-$w.json" >>"$OUT/serve/acks.tsv" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])).get("resizes") or []:
    print("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s" % (r["client"], r["epoch"], r["outcome"], r.get("latency_us", 0), r.get("drain_us", 0),
                                                       r.get("native_us", 0), r.get("moved", 0), r.get("task_us", 0), r.get("deliver_us", 0),
                                                       r.get("written_us", 0), r.get("woke_us", 0)))
EOF
        }
        while read -r a b; do served_group "$a" "$b"; done < <(pairs)
        for t in ${TRIPLES:-}; do
            read -r -a tri <<<"${t//+/ }"
            served_group "${tri[@]}"
        done
        python3 - "$OUT/serve/acks.tsv" <<'EOF' | tee -a "$S"
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
rows = list({(r[0], r[1]): r for r in rows}.values())  # one record per client and epoch
o = collections.Counter(r[2] for r in rows)
lat = sorted(float(r[3]) for r in rows if r[2] == "ok")
dr = sorted(float(r[4]) for r in rows if r[2] == "ok")
p = lambda v, q: v[min(len(v) - 1, int(q * len(v)))] if v else 0
print("served: %d grant changes: %s; push->ack p50 %.0f us p90 %.0f us p99 %.0f us; client drain p50 %.0f us p99 %.0f us"
      % (len(rows), dict(o), p(lat, .5), p(lat, .9), p(lat, .99), p(dr, .5), p(dr, .99)))
# Moves of served launches (a launch retreated and relaunched on the new
# range), apart from acks that waited for native launches (the first split
# after an alone grant: those kernels cannot move, the ack waits for them).
mv = [r for r in rows if r[2] == "ok" and len(r) > 6 and int(r[6]) > 0 and float(r[5]) == 0]
nat = [r for r in rows if r[2] == "ok" and len(r) > 6 and float(r[5]) > 0]
if mv:
    print("served: %d moves of running launches: client drain %s us; push->ack %s us; one task %s us; push->client %s us" % (
        len(mv), " ".join("%.0f" % float(r[4]) for r in mv), " ".join("%.0f" % float(r[3]) for r in mv),
        " ".join("%.0f" % float(r[7]) if len(r) > 7 and float(r[7]) > 0 else "?" for r in mv),
        " ".join("%.0f" % float(r[8]) if len(r) > 8 and float(r[8]) > 0 else "?" for r in mv)))
    # The issue's figure: the push to the drained range, less one task.
    print("served: moves, push->drained minus one task: %s us" % " ".join(
        "%.0f" % (float(r[8]) + float(r[4]) - float(r[7])) if len(r) > 8 and float(r[8]) > 0 and float(r[7]) > 0 else "?" for r in mv))
# The delivery's parts over every grant: the daemon's push to its write on
# the socket, to the client's listener waking, to the grant taken (its lock).
parts = [(float(r[9]), float(r[10]), float(r[8])) for r in rows if r[2] == "ok" and len(r) > 10 and float(r[10]) > 0]
if parts:
    col = lambda i: sorted(x[i] for x in parts)
    print("served: delivery of %d grants, p50/p90/max us: push->written %.0f/%.0f/%.0f, push->woke %.0f/%.0f/%.0f, push->taken %.0f/%.0f/%.0f" % (
        (len(parts),) + tuple(f for i in range(3) for f in (p(col(i), .5), p(col(i), .9), col(i)[-1]))))
if nat:
    print("served: %d acks after native launches drained: native %s us" % (len(nat), " ".join("%.0f" % float(r[5]) for r in nat)))
EOF
        # Where each move's time went, as the clients logged it (seen after
        # the grant, drained, relaunched).
        grep -h 'slate: serve: .* moved \[' "$L"/*.served-*.err 2>/dev/null | sed 's/^slate: serve: /    move: /' | tee -a "$S"
        stop_daemon
    }
fi

# makespan MODE NAME...: one run of a group of plain builds (no hooks; a
# pair, or more with TRIPLES), appended to $L/rounds.tsv as group (the
# names joined by +), mode, wall ms, span ms. The wall time holds the
# processes' start (CUDA initialisation, input generation: tens to hundreds
# of ms, varying run to run); the span is the group's GPU work, from the
# programs' HARNESS_SPAN lines (the wall-clock start of the first timed
# phase and end of the last; run together, all first wait at a start line,
# HARNESS_GATE): together, from the earliest start to the latest end; one
# after the other, the sum. Each mode is timed $ROUNDS times, the modes
# alternating, and the rows keep the median span. split-M (pairs): the
# first program on SMs 0..M-1, the second on the rest, without the daemon.
makespan() {
    local mode=$1
    shift
    local names=("$@") w t0 t1 i n sk="$W/nothing/serve.sock" pids=() files=()
    w=$(IFS=+; echo "${names[*]}")
    local common=()
    # Served runs log each start (SLATE_LOG: ranges, starved restarts) into
    # their .out files (the span parse reads only the HARNESS lines).
    case $mode in serve | serve-equal | serve-env | serve-alt*) sk="$sock" common=(SLATE_LOG=1) ;; esac
    # serve-env: the programs with ALT_ENV too.
    if [ "$mode" = serve-env ]; then
        local ae=()
        read -r -a ae <<<"$ALT_ENV"
        common+=("${ae[@]}")
    fi
    for n in "${names[@]}"; do files+=("$L/$n.ms-$w-$mode.out"); done
    t0=$(now_ns)
    if [ "$mode" = sequential ]; then
        for i in "${!names[@]}"; do
            (cd "$W" && SLATEC_SOCKET="$sk" HARNESS_REPS="$REPS" HARNESS_SPAN=1 timeout 300 "$W/${names[$i]}.plain" >"${files[$i]}" 2>&1)
        done
    else
        # All wait at the start line of their first timed phase (HARNESS_GATE).
        local gate="$W/gate/$w.$mode"
        rm -rf "$gate"
        for i in "${!names[@]}"; do
            local e=("${common[@]}")
            if [[ $mode == split-* ]]; then
                local m=${mode#split-}
                if [ "$i" = 0 ]; then e=(SLATE_SM_RANGE="0:$((m - 1))"); else e=(SLATE_SM_RANGE="$m:$((SMS - 1))"); fi
            fi
            (cd "$W" && env "${e[@]}" SLATEC_SOCKET="$sk" HARNESS_REPS="$REPS" HARNESS_SPAN=1 HARNESS_GATE="$gate:${#names[@]}" \
                timeout 300 "$W/${names[$i]}.plain" >"${files[$i]}" 2>&1) &
            pids+=($!)
        done
        wait "${pids[@]}"
    fi
    t1=$(now_ns)
    local us=$(((t1 - t0) / 1000))
    local ms="$((us / 1000)).$(printf %03d $((us % 1000)))"
    local span
    span=$(awk -v seq="$([ "$mode" = sequential ] && echo 1 || echo 0)" -v want="${#names[@]}" '
        $1 == "HARNESS_SPAN" { n++; s[n] = $2; e[n] = $3 }
        END {
            if (n != want) { print "-"; exit }
            d = 0
            if (seq) {
                for (i = 1; i <= n; i++) d += e[i] - s[i]
            } else {
                lo = s[1]; hi = e[1]
                for (i = 2; i <= n; i++) { if (s[i] < lo) lo = s[i]; if (e[i] > hi) hi = e[i] }
                d = hi - lo
            }
            printf "%.3f\n", d / 1000
        }' "${files[@]}")
    # Each program's own span and time per run (HARNESS_TIME median).
    local own
    # (HARNESS_WALL: the warm-up's and each round's wall-clock ms, in order.)
    own=$(for i in "${!names[@]}"; do awk -v n="${names[$i]}" '$1 == "HARNESS_SPAN" { s = ($3 - $2) / 1000 } $1 == "HARNESS_TIME" { t = t " " $3 }
        $1 == "HARNESS_WALL" { w = w " wall"; for (i = 3; i <= NF; i++) w = w sprintf("%s%.1f", i == 3 ? " " : "/", $i / 1000) }
        END { printf "%s %.1f ms (us/run%s;%s); ", n, s, t, w }' "${files[$i]}"; done)
    printf '%s\t%s\t%s\t%s\n' "$w" "$mode" "$ms" "$span" >>"$L/rounds.tsv"
    # Each program's warm-up wall (its first run: where registration and
    # first-use costs land), for the group's medians.
    for i in "${!names[@]}"; do
        awk -v g="$w" -v m="$mode" -v n="${names[$i]}" '$1 == "HARNESS_WALL" { printf "%s\t%s\t%s\t%s\n", g, m, n, $3 }' "${files[$i]}"
    done >>"$L/warmups.tsv"
    say "    makespan $w $mode wall $ms ms, span $span ms: $own"
}

# median_row MODE FILE NAME...: the median span of the group's rounds in
# MODE, as a row of FILE ("-": $ROWS). A group is complementary when it
# mixes compute-bound programs ($COMPUTE) with others.
median_row() {
    local mode=$1 out=$2 comp=false ms w n c=0
    shift 2
    [ "$out" = - ] && out=$ROWS
    w=$(IFS=+; echo "$*")
    for n in "$@"; do grep -qw "$n" <<<"$COMPUTE" && c=$((c + 1)); done
    [ "$c" -gt 0 ] && [ "$c" -lt "$#" ] && comp=true
    ms=$(awk -F'\t' -v w="$w" -v m="$mode" '$1 == w && $2 == m && $4 != "-" { print $4 }' "$L/rounds.tsv" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
    [ -n "$ms" ] && printf '%s\t%s\t%s\t%s\n' "$w" "$comp" "$mode" "$ms" >>"$out"
}

# splits_of LOG: what a daemon gave the group (its log's distinct splits).
splits_of() {
    grep -h 'grants (' "$1" 2>/dev/null | sed 's/^.*grants (/grants (/; s/client [0-9]* //g; s/ (busy [0-9.]*)//g' |
        sort | uniq -c | sed 's/^ */    split x/' | tee -a "$S"
}

# group_rounds NAME...: the makespan rounds of one group (sequential, MPS,
# serve under a daemon kept up through them, and SPLITS for pairs), then
# the same under --unplanned equal, and the group's medians.
group_rounds() {
    local w m r up=0
    w=$(IFS=+; echo "$*")
    # The other modes' programs are pointed at no socket.
    start_daemon "ms-$w" && up=1
    for r in $(seq 1 "$ROUNDS"); do
        makespan sequential "$@"
        makespan mps "$@"
        [ "$up" = 1 ] && makespan serve "$@"
        [ "$up" = 1 ] && [ -n "${ALT_ENV:-}" ] && makespan serve-env "$@"
        [ "$#" = 2 ] && for m in $SPLITS; do makespan "split-$m" "$@"; done
    done
    [ "$up" = 1 ] && stop_daemon
    splits_of "$L/serve-ms-$w.log"
    # The same under --unplanned equal (kept in rounds.tsv and the
    # summary; serve.json's serve rows are the daemon's default).
    if start_daemon "ms-equal-$w" --unplanned equal; then
        for r in $(seq 1 "$ROUNDS"); do makespan serve-equal "$@"; done
        stop_daemon
    fi
    # The daemon with ALT_ARGS too (serve-alt; summary only); several
    # sets of flags separated by '|' run as serve-alt1, serve-alt2, ...
    local alts=() alt_modes=() i
    [ -n "${ALT_ARGS:-}" ] && IFS='|' read -r -a alts <<<"$ALT_ARGS"
    for i in "${!alts[@]}"; do
        local alt=() mode=serve-alt
        [ "${#alts[@]}" -gt 1 ] && mode="serve-alt$((i + 1))"
        alt_modes+=("$mode")
        read -r -a alt <<<"${alts[$i]}"
        say "    $mode: a daemon with ${alts[$i]}"
        if start_daemon "ms-$mode-$w" "${alt[@]}"; then
            for r in $(seq 1 "$ROUNDS"); do makespan "$mode" "$@"; done
            stop_daemon
            splits_of "$L/serve-ms-$mode-$w.log"
        fi
    done
    for m in sequential mps serve; do median_row "$m" - "$@"; done
    [ "$#" = 2 ] && for m in $SPLITS; do median_row "split-$m" "$L/split-rows.tsv" "$@"; done
    median_row serve-equal "$L/equal-rows.tsv" "$@"
    median_row serve-env "$L/equal-rows.tsv" "$@"
    for m in "${alt_modes[@]}"; do median_row "$m" "$L/equal-rows.tsv" "$@"; done
    for f in "$ROWS" "$L/split-rows.tsv" "$L/equal-rows.tsv"; do
        awk -F'\t' -v w="$w" '$1 == w { printf "    median %s %s %s ms\n", $1, $3, $4 }' "$f" 2>/dev/null
    done | tee -a "$S"
    # The median warm-up (first run) of each program in each mode.
    awk -F'\t' -v w="$w" '$1 == w { k = $2 " " $3; v[k] = v[k] " " $4 } END { for (k in v) print k v[k] }' "$L/warmups.tsv" | sort |
        while read -r m n vals; do
            printf '    warm-up %s %s %s: median %s us\n' "$w" "$m" "$n" "$(tr ' ' '\n' <<<"$vals" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
        done | tee -a "$S"
}

if has makespan; then
    : >"$L/rounds.tsv"
    : >"$L/warmups.tsv"
    : >"$L/equal-rows.tsv"
    : >"$L/split-rows.tsv"
    while read -r a b; do group_rounds "$a" "$b"; done < <(pairs)
    # Three programs at once: TRIPLES="a+b+c ...", each name among NAMES.
    for t in ${TRIPLES:-}; do
        read -r -a tri <<<"${t//+/ }"
        group_rounds "${tri[@]}"
    done
fi

if has killed; then
    read -r a b < <(pairs | head -1)
    start_daemon killed --unplanned equal && {
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
    # served alone / native, per timed label (medians); solo_overhead: the worst label's ratio - 1
    python3 - "$L/$n.cost-native.out" "$L/$n.cost-served.out" >"$OUT/serve/solo.txt" <<'EOF'
import sys
def med(f):
    try:
        return {l.split()[1]: float(l.split()[2]) for l in open(f) if l.startswith("HARNESS_TIME")}
    except OSError:
        return {}
n, s = med(sys.argv[1]), med(sys.argv[2])
worst = None
for k in n:
    if k in s and n[k] > 0:
        r = s[k] / n[k]
        print("ratio %s %.4f" % (k, r))
        worst = r if worst is None else max(worst, r)
if worst is not None:
    print("solo_overhead %.4f" % (worst - 1))
EOF
    sed 's|^|cost served-alone/native: |' "$OUT/serve/solo.txt" | tee -a "$S"
fi

# serve.json (issue 13; bench/results/serve.schema.json)
python3 scripts/serve-json.py --rows "$ROWS" --solo "$OUT/serve/solo.txt" \
    --device "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" \
    --commit "${COMMIT:-$(built_commit)}" "$OUT/serve/acks.tsv" >"$OUT/serve.json"
say "gpu-serve: wrote $OUT/serve.json ($(wc -l <"$ROWS") makespan rows)"

[ "${MPS:-}" = 1 ] && echo quit | nvidia-cuda-mps-control
say "gpu-serve: $(grep -c '^PASS' "$S") passed, $(grep -c '^FAIL\|^BUILD-FAIL' "$S") failed"
cat "$S" >/dev/null
