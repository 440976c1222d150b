#!/usr/bin/env python3
"""Summarise solo-cost timings: transformed vs original, per timer.

Input lines (from scripts/gpu-diff.sh):
  NAME VARIANT ROUND HARNESS_TIME LABEL MEDIAN_US [MIN_US]   (GPU timeline per run, $HARNESS_REPS)
  NAME VARIANT ROUND PROGRAM_TIME LABEL MS                   (the program's own timing, no warm-up)
  NAME VARIANT ROUND PROCESS_TIME process MS                 (that run's whole-process wall time)
  NAME VARIANT ROUND HARNESS_HOLD_LATE LABEL                  (with HOLD=1: a round of LABEL was not held)
VARIANT is "orig" (the original), "env" (the transformed build, the golden,
SLATE_MODE=persistent) or "cap" (transformed with --match-regs); "origE" and
"envE" are runs under CUDA_MODULE_LOADING=EAGER; "envL" the transformed build
with SLATE_PRELOAD=0 (workers loaded lazily at their first launch). Each is
compared with its base: env, cap and envL with orig, envE with origE.
For each (NAME, LABEL) the ratio is median(transformed) / median(original)
over the rounds, which alternate original and transformed runs.
With --held (runs under HARNESS_HOLD=1: the GPU's time alone), timers with
a HARNESS_HOLD_LATE line are left out, and the timeline's JSON is
solo-timeline-held.json.
With --json DIR, writes DIR/solo-timeline.json and DIR/solo-programs.json
(env vs orig; -capped and -eager variants beside them) as
{"device", "commit", "metric", "rows": [{"case", "native", "slatec"}]}.
"""
import argparse
import json
import math
import statistics
from collections import defaultdict

KINDS = {
    "HARNESS_TIME": ("solo-timeline.json", "GPU time per run in us (harness_timed: median of 3 rounds of $HARNESS_REPS back-to-back runs), median over alternating process runs"),
    "PROGRAM_TIME": ("solo-programs.json", "program-reported time in ms (its own events, single launch or loop, no warm-up), median over alternating process runs"),
    "PROCESS_TIME": ("solo-process.json", "whole-process wall time in ms of the program-time runs (CUDA initialisation included), median over alternating process runs"),
}


PAIRS = [("env", "orig", ""), ("cap", "orig", "-capped"), ("envE", "origE", "-eager"), ("envL", "orig", "-nopreload")]


def table(kind, times, variant, base):
    rows = []
    for (name, label), v in sorted(times.items()):
        if not v.get(base) or not v.get(variant):
            continue
        o, t = statistics.median(v[base]), statistics.median(v[variant])
        if o <= 0:
            continue
        rows.append((name, label, o, t, t / o))
    unit = "us" if kind == "HARNESS_TIME" else "ms"
    if not rows:
        return rows
    print(f"## {kind} {variant} vs {base}")
    print(f"{'kernel file':28s} {'timer':24s} {'original ' + unit:>12s} {'slatec ' + unit:>12s} {'ratio':>7s}")
    for name, label, o, t, r in rows:
        flag = "  > 1.05" if r > 1.05 else ""
        print(f"{name:28s} {label:24s} {o:12.3f} {t:12.3f} {r:7.3f}{flag}")
    if rows:
        gm = math.exp(sum(math.log(r[4]) for r in rows) / len(rows))
        worst = max(rows, key=lambda r: r[4])
        print(f"\n{len(rows)} timers; geometric mean ratio {gm:.3f}; worst {worst[4]:.3f} ({worst[0]}/{worst[1]}); "
              f"{sum(1 for r in rows if r[4] > 1.05)} above 1.05\n")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--json", help="directory for the JSON results")
    ap.add_argument("--device", default="")
    ap.add_argument("--commit", default="")
    ap.add_argument("--held", action="store_true", help="the timers ran under HARNESS_HOLD=1")
    a = ap.parse_args()
    times = {k: defaultdict(lambda: defaultdict(list)) for k in KINDS}
    late = set()
    with open(a.raw) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[3] == "HARNESS_HOLD_LATE":
                late.add((parts[0], parts[4]))
            if len(parts) < 6 or parts[3] not in KINDS:
                continue
            name, variant, _round, kind, label, value = parts[:6]
            times[kind][(name, label)][variant].append(float(value))
    for key in sorted(late):
        print(f"left out: {key[0]}/{key[1]} (a round under HARNESS_HOLD was not held)")
        times["HARNESS_TIME"].pop(key, None)
    for kind, (fname, metric) in KINDS.items():
        if a.held and kind == "HARNESS_TIME":
            fname = "solo-timeline-held.json"
            metric = metric.replace("back-to-back runs)", "back-to-back runs, each round held behind a gate kernel until all were enqueued: HARNESS_HOLD=1)")
        for variant, base, suffix in PAIRS:
            rows = table(kind, times[kind], variant, base)
            if a.json and rows:
                fname_v = fname.replace(".json", suffix + ".json")
                doc = {"device": a.device, "commit": a.commit, "metric": metric + (f"; {variant} vs {base}" if suffix else ""),
                       "rows": [{"case": f"{n}/{l}", "native": o, "slatec": t} for n, l, o, t, _ in rows]}
                with open(f"{a.json}/{fname_v}", "w") as out:
                    json.dump(doc, out, indent=1)


if __name__ == "__main__":
    main()
