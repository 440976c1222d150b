#!/usr/bin/env bash
# Solo kernel time under Nsight Compute: the GPU duration of every kernel
# launch (gpu__time_duration.sum), original program vs transformed program
# (auto iters, all SMs), for the harness programs named in $FILES (default:
# all built). Clocks are not locked (--clock-control none) and caches are not
# flushed between kernels (--cache-control none), as in a normal run. Sums
# per program: the worker kernels replace the originals one for one.
# Needs the builds of scripts/gpu-diff.sh (PHASES=build) in $W.
set -uo pipefail
cd "$(dirname "$0")/.."
export SLATE_MODE=${SLATE_MODE:-persistent}
W=${W:-/tmp/slatec-gpu}
OUT=${OUT:-$PWD/.work/gpu-out}
# NCU_VARIANT: the transformed build to time: env (the golden, default) or
# cap (transformed with $SLATEC_FLAGS, e.g. --match-regs sm_90).
V=${NCU_VARIANT:-env}
mkdir -p "$OUT/ncu"
files=${FILES:-$(ls "$W"/*.orig | xargs -n1 basename | sed 's/\.orig$//')}
printf '%-28s %8s %14s %14s %7s\n' program kernels "original us" "slatec us" ratio >"$OUT/solo-ncu.txt"
for n in $files; do
    for v in orig "$V"; do
        (cd /tmp && timeout 300 ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none \
            --csv --print-units base "$W/$n.$v" >"$OUT/ncu/$n.$v.csv" 2>/dev/null)
    done
    python3 - "$n" "$OUT/ncu/$n.orig.csv" "$OUT/ncu/$n.$V.csv" >>"$OUT/solo-ncu.txt" <<'PY'
import csv, sys
def total(path):
    s, k = 0.0, 0
    with open(path) as f:
        rows = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(rows):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            s += float(r["Metric Value"].replace(",", "")); k += 1
    return s / 1e3, k
o, ko = total(sys.argv[2]); t, kt = total(sys.argv[3])
print(f"{sys.argv[1]:28s} {ko:8d} {o:14.1f} {t:14.1f} {t / o if o else 0:7.3f}")
PY
done
# NCU_REPS=N also runs each program with HARNESS_REPS=N (a warm-up, then
# timed runs) and times the launches after each kernel's first ones: per
# kernel, the median of its later launches times its launches in one plain
# run, summed per program (solo-ncu-steady.txt/.json). The plain run's figure
# is each kernel's first launch, cold; a worker's first launch under ncu can
# cost more than its later ones (bench/RESULTS.md, 2026-11-26, eighth).
if [ -n "${NCU_REPS:-}" ]; then
    printf '%-28s %14s %14s %7s\n' program "original us" "slatec us" ratio >"$OUT/solo-ncu-steady.txt"
    for n in $files; do
        for v in orig "$V"; do
            (cd /tmp && HARNESS_REPS=$NCU_REPS timeout 300 ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none \
                --csv --print-units base "$W/$n.$v" >"$OUT/ncu/$n.$v.reps.csv" 2>/dev/null)
        done
        python3 - "$n" "$OUT/ncu/$n.orig.csv" "$OUT/ncu/$n.orig.reps.csv" "$OUT/ncu/$n.$V.csv" "$OUT/ncu/$n.$V.reps.csv" >>"$OUT/solo-ncu-steady.txt" <<'PY'
import csv, statistics, sys
from collections import Counter, defaultdict
def launches(path):
    with open(path) as f:
        rows = [l for l in f if l.startswith('"')]
    return [(r["Kernel Name"], float(r["Metric Value"].replace(",", ""))) for r in csv.DictReader(rows)
            if r.get("Metric Name") == "gpu__time_duration.sum"]
def steady(plain, reps):
    per_run = Counter(k for k, _ in launches(plain))
    times = defaultdict(list)
    for k, t in launches(reps):
        times[k].append(t)
    total = 0.0
    for k, c in per_run.items():
        later = times[k][c:] or times[k]
        total += statistics.median(later) * c if later else 0.0
    return total / 1e3
o, t = steady(sys.argv[2], sys.argv[3]), steady(sys.argv[4], sys.argv[5])
print(f"{sys.argv[1]:28s} {o:14.1f} {t:14.1f} {t / o if o else 0:7.3f}")
PY
    done
    python3 - "$OUT/solo-ncu-steady.txt" "$OUT/solo-ncu-steady.json" "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" "${COMMIT:-}" <<'PY'
import json, math, sys
rows = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p = line.split()
    if len(p) == 4 and float(p[3]) > 0:
        rows.append({"case": p[0], "native": float(p[1]), "slatec": float(p[2])})
json.dump({"device": sys.argv[3], "commit": sys.argv[4], "metric": "kernel time in us under Nsight Compute after each kernel's first launches (median of later launches x launches per run, summed)", "rows": rows}, open(sys.argv[2], "w"), indent=1)
if rows:
    rs = [r["slatec"] / r["native"] for r in rows]
    gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
    w = max(zip(rs, rows), key=lambda x: x[0])
    print(f"\n{len(rs)} programs; steady-state geometric mean kernel-time ratio {gm:.3f}; worst {w[0]:.3f} ({w[1]['case']}); {sum(1 for r in rs if r > 1.05)} above 1.05")
PY
    cat "$OUT/solo-ncu-steady.txt"
fi
python3 - "$OUT/solo-ncu.txt" "$OUT/solo-ncu.json" "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" "${COMMIT:-}" <<'PY'
import json, math, sys
rs = []
rows = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p = line.split()
    if len(p) == 5 and float(p[4]) > 0:
        rows.append({"case": p[0], "native": float(p[2]), "slatec": float(p[3]), "kernels": int(p[1])})
json.dump({"device": sys.argv[3], "commit": sys.argv[4], "metric": "kernel time in us under Nsight Compute (gpu__time_duration.sum over every launch of the program)", "rows": rows}, open(sys.argv[2], "w"), indent=1)
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p = line.split()
    if len(p) == 5 and float(p[4]) > 0:
        rs.append((p[0], float(p[4])))
if rs:
    gm = math.exp(sum(math.log(r) for _, r in rs) / len(rs))
    w = max(rs, key=lambda x: x[1])
    print(f"\n{len(rs)} programs; geometric mean kernel-time ratio {gm:.3f}; worst {w[1]:.3f} ({w[0]}); {sum(1 for _, r in rs if r > 1.05)} above 1.05")
PY
cat "$OUT/solo-ncu.txt"
