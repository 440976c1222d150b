#!/usr/bin/env python3
"""Summarise the merged-scheduler benchmark (scripts/merge-gpu.sh, bench phase).

Input: the BENCH lines the drivers in bench/merge/ print:
    BENCH CASE MODE sms N
    BENCH CASE MODE solo KERNEL MS
    BENCH CASE MODE sequential - MS
    BENCH CASE MODE concurrent - MS
    BENCH CASE MODE merged default MS
    BENCH CASE MODE sweep A:B[:C] MS
    BENCH CASE MODE iters N MS
    BENCH CASE MODE planned A:B[:C] MS     (the planner's merge, scripts/merge-gpu.sh plan)
    BENCH CASE - planned-baseline sequential|streams   (the planner says: do not merge)
Output, per case: the baselines, the merged kernel with the default allocation
per mode, the allocation sweep (Liang et al., Fig. 2) as a table with one
column per mode, and the best allocation of each mode with its speedup over
sequential execution and over concurrent streams.

Usage: merge-bench-report.py [--json OUT --device NAME --commit C --complementary "case ..."] bench-raw.txt

--json also writes the rows in the shape of bench/results/merge.json (schema:
bench/results/merge.schema.json): sequential, streams, solo (per kernel) and
every merged run (split "default" or the sweep's A:B[:C]), per case.
"""

import argparse
import datetime
import json
import sys
from collections import OrderedDict, defaultdict

MODES = ["interleaved", "persistent", "smrange", "split"]
# Variants built from another case's driver: the option that distinguishes them.
VARIANTS = {"bs_vecadd_cap": "maxnreg=32 (split: 32,0)"}


def rows_of(cases, complementary):
    rows = []
    for name, c in cases.items():
        base = {"case": name, "complementary": name in complementary}
        if name in VARIANTS:
            base["variant"] = VARIANTS[name]

        def add(mode, split, ms, planned=False, **extra):
            r = dict(base, mode=mode, split=split, ms=round(ms, 4), planned=planned)
            r.update(extra)
            rows.append(r)
        if c["seq"] is not None:
            add("sequential", "-", c["seq"], planned=c["planned_baseline"] == "sequential")
        if c["conc"] is not None:
            add("streams", "-", c["conc"], planned=c["planned_baseline"] == "streams")
        for m, (alloc, ms) in c["planned"].items():
            add(m, alloc, ms, planned=True)
        for k, ms in c["solo"].items():
            add("solo", "-", ms, kernel=k)
        for m in MODES:
            if m in c["default"]:
                add(m, "default", c["default"][m])
            for it, ms in c["iters"].get(m, {}).items():
                row = dict(base, mode=m, split="default", ms=round(ms, 4), planned=False)
                row["variant"] = (base.get("variant", "") + " iters=" + it).strip()
                rows.append(row)
        for alloc in sorted(c["sweep"], key=lambda a: [int(x) for x in a.split(":")]):
            for m in MODES:
                if m in c["sweep"][alloc]:
                    add(m, alloc, c["sweep"][alloc][m])
    return rows


def main(path, args=None):
    cases = OrderedDict()
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 5 or p[0] != "BENCH":
                continue
            case, mode, what = p[1], p[2], p[3]
            c = cases.setdefault(case, {"sms": None, "solo": OrderedDict(), "seq": None, "conc": None,
                                        "default": {}, "sweep": defaultdict(dict), "iters": defaultdict(dict),
                                        "planned": {}, "planned_baseline": None})
            try:
                if what == "sms":
                    c["sms"] = int(p[4])
                elif what == "solo":
                    c["solo"][p[4]] = float(p[5])
                elif what == "sequential":
                    c["seq"] = float(p[5])
                elif what == "concurrent":
                    c["conc"] = float(p[5])
                elif what == "merged":
                    c["default"][mode] = float(p[5])
                elif what == "sweep":
                    c["sweep"][p[4]][mode] = float(p[5])
                elif what == "iters":
                    c["iters"][mode][p[4]] = float(p[5])
                elif what == "planned":
                    c["planned"][mode] = (p[4], float(p[5]))
                elif what == "planned-baseline" and p[4] in ("sequential", "streams"):
                    c["planned_baseline"] = p[4]
            except (IndexError, ValueError):
                print("skipping malformed line: %s" % line.strip(), file=sys.stderr)
    if args is not None and args.json:
        doc = {"device": args.device, "commit": args.commit, "date": datetime.date.today().isoformat(),
               "rows": rows_of(cases, set(args.complementary.split()))}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    for name, c in cases.items():
        print("case %s on %s SMs (median ms)" % (name, c["sms"]))
        solo = ", ".join("%s %.4f" % kv for kv in c["solo"].items())
        print("  baselines: sequential %s, concurrent streams %s%s" % (
            fmt(c["seq"]), fmt(c["conc"]), "; solo: " + solo if solo else ""))
        print("  merged, default allocation: " + ", ".join(
            "%s %s" % (m, fmt(c["default"].get(m))) for m in MODES if m in c["default"]))
        for m in MODES:
            if c["iters"].get(m):
                print("  %s task sizes (default allocation): %s" % (m, ", ".join(
                    "iters=%s %.4f" % kv for kv in sorted(c["iters"][m].items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 1 << 30))))
        modes = [m for m in MODES if any(m in r for r in c["sweep"].values())]
        if modes:
            print("  %-14s %s" % ("alloc", "".join("%14s" % m for m in modes)))
            for alloc in sorted(c["sweep"], key=lambda a: [int(x) for x in a.split(":")]):
                row = c["sweep"][alloc]
                print("  %-14s %s" % (alloc, "".join("%14s" % fmt(row.get(m)) for m in modes)))
        for m in modes:
            pts = [(r[m], a) for a, r in c["sweep"].items() if m in r]
            if not pts:
                continue
            best, at = min(pts)
            worst, wat = max(pts)
            line = "  best %-11s %.4f ms at %s (worst %.4f at %s)" % (m, best, at, worst, wat)
            if c["seq"]:
                line += "; vs sequential %.3fx" % (c["seq"] / best)
            if c["conc"]:
                line += ", vs concurrent %.3fx" % (c["conc"] / best)
            print(line)
        # The planner's choice against the best measured run of any mode (baselines included).
        choice = None
        if c["planned"]:
            m, (alloc, ms) = next(iter(c["planned"].items()))
            choice = ("%s %s" % (m, alloc), ms)
        elif c["planned_baseline"] == "sequential" and c["seq"]:
            choice = ("sequential (no merge)", c["seq"])
        elif c["planned_baseline"] == "streams" and c["conc"]:
            choice = ("streams (no merge)", c["conc"])
        if choice:
            runs = [v for v in (c["seq"], c["conc"]) if v] + list(c["default"].values()) + \
                [v for r in c["sweep"].values() for v in r.values()] + [choice[1]]
            best = min(runs)
            print("  planned %s: %.4f ms; best measured %.4f ms; planned/best %.3f" % (choice[0], choice[1], best, choice[1] / best))
        print()


def fmt(v):
    return "-" if v is None else "%.4f" % v


if __name__ == "__main__":
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("raw")
    ap.add_argument("--json")
    ap.add_argument("--device", default="unknown")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--complementary", default="")
    a = ap.parse_args()
    main(a.raw, a)
