#!/usr/bin/env python3
"""Summarise scripts/worker-ab.sh output: per timer, the worker's time over
the original's as the median of per-round ratios (each round runs both, so
the GPU's state between rounds cancels), beside the ratio of the least
times, and the same for the two builds of the workers ("old" against
"env"; with OLD = copies of the current goldens that is the same program
built twice: the measurement's own noise).

    scripts/worker-ab-report.py [--variant static] ab.txt
    scripts/worker-ab-report.py --json bench/results/solo-timeline-paired.json --device NAME --commit REV ab.txt

--json writes the table as data, in the solo-*.json form ({"device",
"commit", "metric", "rows": [{"case", "native", "slatec"}]}): native is
the original's median over the rounds, slatec that times the median
per-round ratio.
"""
import argparse
import collections
import json
import math
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--variant", default="static")
    ap.add_argument("--json", help="write the rows here (solo-*.json form)")
    ap.add_argument("--device", default="unknown")
    ap.add_argument("--commit", default="unknown")
    a = ap.parse_args()
    t = collections.defaultdict(lambda: collections.defaultdict(dict))
    late = set()  # (program, label): a round under HARNESS_HOLD was not held
    with open(a.file) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[4] == "HARNESS_HOLD_LATE" and p[2] == a.variant:
                late.add((p[1], p[5]))
            if len(p) < 8 or p[4] != "HARNESS_TIME" or p[2] != a.variant:
                continue
            t[(p[1], p[5])][p[3]][int(p[0])] = float(p[6])
    for k in sorted(late):
        print(f"left out: {k[0]}/{k[1]} (a round under HARNESS_HOLD was not held)")
        t.pop(k, None)
    rows = []
    for (prog, label), b in sorted(t.items()):
        if not all(k in b for k in ("orig", "old", "env")):
            continue
        rounds = sorted(set(b["orig"]) & set(b["old"]) & set(b["env"]))
        if not rounds:
            continue
        paired = statistics.median(b["env"][r] / b["orig"][r] for r in rounds)
        least = min(b["env"].values()) / min(b["orig"].values())
        twice = statistics.median(b["old"][r] / b["env"][r] for r in rounds)
        rows.append((f"{prog}/{label}", min(b["orig"].values()), paired, least, twice, len(rounds),
                     statistics.median(b["orig"][r] for r in rounds)))
    if not rows:
        print("no timer with orig, old and env runs")
        return
    if a.json:
        doc = {"device": a.device, "commit": a.commit,
               "metric": "GPU time per run in us (harness_timed, scripts/worker-ab.sh rounds): native = the original's median over "
                         "the rounds; slatec = native x the median of per-round worker/original ratios (SLATE_MODE=persistent, "
                         f"the '{a.variant}' variant of the current goldens' build)",
               "rows": [{"case": r[0], "native": round(r[6], 3), "slatec": round(r[6] * r[2], 3)} for r in rows]}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")

    def geo(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    far = math.log(1.05)
    print(f"{len(rows)} timers, {min(r[5] for r in rows)}-{max(r[5] for r in rows)} rounds")
    print(f"worker/original, median of per-round ratios: geomean {geo([r[2] for r in rows]):.4f}, above 1.05: {sum(r[2] > 1.05 for r in rows)}")
    print(f"worker/original, least times: geomean {geo([r[3] for r in rows]):.4f}, above 1.05: {sum(r[3] > 1.05 for r in rows)}")
    print(f"the two worker builds, median of per-round ratios: beyond 5%: {sum(abs(math.log(r[4])) > far for r in rows)}, "
          f"largest {max(max(r[4], 1 / r[4]) for r in rows):.3f}")
    print(f"{'timer':50s} {'orig us':>9s} {'paired':>7s} {'least':>7s} {'builds':>7s}")
    for r in sorted(rows, key=lambda r: -r[2]):
        print(f"{r[0]:50s} {r[1]:9.1f} {r[2]:7.3f} {r[3]:7.3f} {r[4]:7.3f}")


if __name__ == "__main__":
    main()
