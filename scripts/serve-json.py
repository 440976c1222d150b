#!/usr/bin/env python3
"""serve.json (issue 13; bench/results/serve.schema.json) from gpu-serve's files.

    serve-json.py --rows ROWS.tsv --solo SOLO.txt --device NAME --commit C ACKS.tsv...

ROWS.tsv: workload, complementary, mode, makespan ms (the makespan phase);
SOLO.txt: the cost phase's "solo_overhead X"; ACKS.tsv: serve/acks.tsv of one
or more served runs (gpu-serve.sh's columns: client, epoch, outcome,
latency_us, drain_us, native_us, moved, task_us, deliver_us, written_us,
woke_us). Several runs pool their resize figures: a daemon numbers clients
and epochs from 1, so acks are told apart per file. Missing files give
nulls (a run of only some phases).
"""
import argparse
import json
import sys


def read_acks(path):
    try:
        lines = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
    except OSError:
        return []
    # One record per (client, epoch) within a run (the summary may list one twice).
    return list({(a[0], a[1]): a for a in lines}.values())


def pct(v, q):
    """The nearest-rank percentile gpu-serve has always reported."""
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows")
    ap.add_argument("--solo")
    ap.add_argument("--device", default="")
    ap.add_argument("--commit", default="")
    ap.add_argument("acks", nargs="*")
    a = ap.parse_args()

    rows = []
    if a.rows:
        try:
            for l in open(a.rows):
                w, comp, mode, ms = l.rstrip("\n").split("\t")
                rows.append({"workload": w, "complementary": comp == "true", "mode": mode, "makespan_ms": float(ms)})
        except OSError:
            pass
    acks = [r for f in a.acks for r in read_acks(f)]
    lat = sorted(float(r[3]) for r in acks if r[2] == "ok")
    # Moves of running served launches, apart from acks that waited for
    # native launches (as the summary's "moves of running launches").
    mv = [r for r in acks if r[2] == "ok" and len(r) > 6 and int(r[6]) > 0 and float(r[5]) == 0]
    # drain - one task, where the client said its task time (the issue's
    # target: a drain within one task + 100 us).
    over = sorted(float(r[4]) - float(r[7]) for r in mv if len(r) > 7 and float(r[7]) > 0)
    # The daemon's push to the drained range: the grant's delivery to the
    # client (its ack says when it arrived, CLOCK_MONOTONIC on this host) and
    # the client's drain, less one task.
    cmd = sorted(float(r[8]) + float(r[4]) - float(r[7]) for r in mv if len(r) > 8 and float(r[8]) > 0 and float(r[7]) > 0)
    moved = {"count": len(mv), "push_to_ack_p99_us": pct(sorted(float(r[3]) for r in mv), 0.99),
             "drain_p99_us": pct(sorted(float(r[4]) for r in mv), 0.99), "drain_minus_task_p99_us": pct(over, 0.99),
             "deliver_p99_us": pct(sorted(float(r[8]) for r in mv if len(r) > 8 and float(r[8]) > 0), 0.99),
             "push_to_drained_minus_task_p99_us": pct(cmd, 0.99)}
    solo = None
    if a.solo:
        try:
            for l in open(a.solo):
                if l.startswith("solo_overhead"):
                    solo = float(l.split()[1])
        except OSError:
            pass
    json.dump({"device": a.device or "unknown", "commit": a.commit, "makespan": "span", "rows": rows,
               "resize_p99_us": pct(lat, 0.99), "resize_moved": moved, "solo_overhead": solo},
              sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
