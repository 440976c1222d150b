#!/usr/bin/env python3
"""Reads smid_map outputs (see bench/topology/smid_map.cu, scripts/smid-map.sh).

smid_map.py NAME HOLD_OUT PROBE_OUT: the hold's busy set H (its own %smid),
the probe blocks that started while every held block still ran ("early"),
and how many early probe SMs lie in H (0 when both number SMs alike).

smid_map.py --bits HOLD0 PROBE0 ... HOLD7 PROBE7: runs whose hold spun where
bit b of its %smid is set. A probe SM that started early in run b is,
physically, an SM whose hold id has bit b clear; one that started late has
it set. Prints the probe-id -> hold-id map that this implies (valid when the
probe's numbering is the same in every run) and how many ids it maps to
themselves.
"""
import sys


def read(path, role):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) == 7 and f[0] == role and f[1] == "smid":
            rows.append((int(f[2]), int(f[4]), int(f[6])))
    return rows


def early(hold_path, probe_path):
    hold = read(hold_path, "hold")
    probe = read(probe_path, "probe")
    held = [r for r in hold if r[2] > r[1]]
    if not held or not probe:
        return None, None, None
    cut = min(r[2] for r in held)  # every held block still ran before this
    first = max(r[1] for r in held)  # and every one had started
    H = {r[0] for r in held}
    E = {r[0] for r in probe if first <= r[1] < cut}
    return H, E, probe


def ranges(ids):
    ids = sorted(ids)
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def one(name, hold_path, probe_path):
    H, E, probe = early(hold_path, probe_path)
    if H is None:
        print(f"== {name}: no data")
        return
    both = E & H
    verdict = "shared numbering" if not both and E else ("DIFFERENT numbering" if both else "no early probe block")
    print(f"== {name}: hold busy {len(H)} SMs; probe early {len(E)} of {len(probe)}; early in hold set {len(both)}: {verdict}")
    print(f"   hold set {ranges(H)}")
    print(f"   early probe {ranges(E)}")


def bits(paths):
    early_by_bit = []
    for b in range(len(paths) // 2):
        H, E, probe = early(paths[2 * b], paths[2 * b + 1])
        if H is None or not E:
            print(f"== bits: run {b} has no early probe block")
            return
        early_by_bit.append((E, {r[0] for r in probe}))
    ids = set.intersection(*[p for _, p in early_by_bit])
    m = {p: sum((0 if p in E else 1) << b for b, (E, _) in enumerate(early_by_bit)) for p in sorted(ids)}
    same = sum(1 for p, h in m.items() if p == h)
    images = len(set(m.values()))
    print(f"== bits: {len(m)} probe SMs, {same} map to the same hold id, {images} distinct images")
    print("   probe->hold " + " ".join(f"{p}:{h}" for p, h in m.items()))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--bits":
        bits(sys.argv[2:])
    elif len(sys.argv) == 4:
        one(*sys.argv[1:])
    else:
        sys.exit("usage: smid_map.py NAME HOLD PROBE | --bits HOLD0 PROBE0 ...")
