#!/usr/bin/env python3
"""Summarise solo-cost timings: transformed vs original, per harness timer.

Input lines (from scripts/gpu-diff.sh):  NAME VARIANT ROUND HARNESS_TIME LABEL MEDIAN_US [MIN_US]
VARIANT is "orig" or "env" (the transformed build). For each (NAME, LABEL)
the ratio is median(transformed medians) / median(original medians) over the
rounds, which alternate original and transformed runs.
"""
import math
import statistics
import sys
from collections import defaultdict


def main(path):
    times = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 6 or parts[3] != "HARNESS_TIME":
                continue
            name, variant, _round, _, label, median = parts[:6]
            times[(name, label)][variant].append(float(median))
    rows = []
    for (name, label), v in sorted(times.items()):
        if not v.get("orig") or not v.get("env"):
            continue
        o, t = statistics.median(v["orig"]), statistics.median(v["env"])
        if o <= 0:
            continue
        rows.append((name, label, o, t, t / o))
    print(f"{'kernel file':28s} {'timer':24s} {'original us':>12s} {'slatec us':>12s} {'ratio':>7s}")
    for name, label, o, t, r in rows:
        flag = "  > 1.05" if r > 1.05 else ""
        print(f"{name:28s} {label:24s} {o:12.1f} {t:12.1f} {r:7.3f}{flag}")
    if rows:
        gm = math.exp(sum(math.log(r[4]) for r in rows) / len(rows))
        worst = max(rows, key=lambda r: r[4])
        print(f"\n{len(rows)} timers; geometric mean ratio {gm:.3f}; worst {worst[4]:.3f} ({worst[0]}/{worst[1]}); "
              f"{sum(1 for r in rows if r[4] > 1.05)} above 1.05")


if __name__ == "__main__":
    main(sys.argv[1])
