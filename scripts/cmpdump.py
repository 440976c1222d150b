#!/usr/bin/env python3
"""Compare two harness dump files (see testdata/include/harness.h).

Usage: cmpdump.py A.bin B.bin      compare record by record
       cmpdump.py --selftest       check this script against records it builds

Record (little endian): u32 name_len, name, u32 dtype, u32 tolerance, u64 count, data.
dtype: 1=f32 2=f64 3=i32 4=u32 5=i64 6=u64 7=u8.

Rules:
  * Both files must hold the same records in the same order: same name, dtype,
    tolerance flag and count.
  * Integer dtypes, and float records with tolerance flag 0, must be
    bit-identical (so -0.0 != +0.0 and NaN payloads matter).
  * Float records with tolerance flag 1 (results that legitimately depend on
    block execution order, e.g. float atomics across blocks) match when
        |a - b| <= ABS_TOL + REL_TOL * max(|a|, |b|)
    with REL_TOL = 1e-5 and ABS_TOL = 1e-6; NaN matches NaN, and infinities
    must be equal.

Exit status: 0 equal, 1 differ, 2 bad input (unreadable or malformed file).
"""

import array
import math
import struct
import sys

REL_TOL = 1e-5
ABS_TOL = 1e-6
MAX_REPORT = 10  # mismatching elements printed per record

# dtype code -> (name, array typecode, element size, is_float)
DTYPES = {
    1: ("f32", "f", 4, True),
    2: ("f64", "d", 8, True),
    3: ("i32", "i", 4, False),
    4: ("u32", "I", 4, False),
    5: ("i64", "q", 8, False),
    6: ("u64", "Q", 8, False),
    7: ("u8", "B", 1, False),
}


class BadInput(Exception):
    pass


def parse(data, label):
    """Returns a list of (name, dtype, tol, count, raw_bytes)."""
    recs = []
    off = 0
    while off < len(data):
        def take(n):
            nonlocal off
            if off + n > len(data):
                raise BadInput("%s: truncated record %d at byte %d" % (label, len(recs), off))
            b = data[off:off + n]
            off += n
            return b
        (nlen,) = struct.unpack("<I", take(4))
        if nlen > 4096:
            raise BadInput("%s: record %d: implausible name length %d" % (label, len(recs), nlen))
        try:
            name = take(nlen).decode("utf-8")
        except UnicodeDecodeError:
            raise BadInput("%s: record %d: name is not UTF-8" % (label, len(recs)))
        dtype, tol = struct.unpack("<II", take(8))
        (count,) = struct.unpack("<Q", take(8))
        if dtype not in DTYPES:
            raise BadInput("%s: record %d (%s): unknown dtype %d" % (label, len(recs), name, dtype))
        if tol not in (0, 1):
            raise BadInput("%s: record %d (%s): bad tolerance flag %d" % (label, len(recs), name, tol))
        raw = take(count * DTYPES[dtype][2])
        recs.append((name, dtype, tol, count, raw))
    return recs


def values(dtype, raw):
    a = array.array(DTYPES[dtype][1])
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ABS_TOL + REL_TOL * max(abs(a), abs(b))


def compare_record(ra, rb, out):
    """Returns the number of differing elements (0 when equal)."""
    name, dtype, tol, count, raw_a = ra
    raw_b = rb[4]
    if raw_a == raw_b:
        return 0
    kind, _, size, is_float = DTYPES[dtype]
    va, vb = values(dtype, raw_a), values(dtype, raw_b)
    bad = 0
    for i in range(count):
        if is_float and tol:
            differ = not close(va[i], vb[i])
        else:
            differ = raw_a[i * size:(i + 1) * size] != raw_b[i * size:(i + 1) * size]
        if differ:
            if bad < MAX_REPORT:
                out.append("  %s[%d] (%s%s): %r != %r" % (
                    name, i, kind, ", tolerance" if tol else "", va[i], vb[i]))
            bad += 1
    if bad > MAX_REPORT:
        out.append("  %s: ... %d more" % (name, bad - MAX_REPORT))
    return bad


def compare(recs_a, recs_b, out):
    """Returns (records_differing, elements_differing, structural_problem)."""
    rec_bad = elem_bad = 0
    structural = False
    if len(recs_a) != len(recs_b):
        out.append("record count differs: %d vs %d" % (len(recs_a), len(recs_b)))
        structural = True
    for idx, (ra, rb) in enumerate(zip(recs_a, recs_b)):
        if ra[:4] != rb[:4]:
            out.append("record %d header differs: %s/%s/tol%d/n=%d vs %s/%s/tol%d/n=%d" % (
                idx, ra[0], DTYPES[ra[1]][0], ra[2], ra[3], rb[0], DTYPES[rb[1]][0], rb[2], rb[3]))
            structural = True
            rec_bad += 1
            continue
        n = compare_record(ra, rb, out)
        if n:
            rec_bad += 1
            elem_bad += n
    return rec_bad, elem_bad, structural


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return selftest()
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        blobs = []
        for p in argv[1:]:
            with open(p, "rb") as f:
                blobs.append(f.read())
        recs_a = parse(blobs[0], argv[1])
        recs_b = parse(blobs[1], argv[2])
    except (OSError, BadInput) as e:
        print("cmpdump: bad input: %s" % e)
        return 2
    out = []
    rec_bad, elem_bad, structural = compare(recs_a, recs_b, out)
    for line in out:
        print(line)
    total = sum(r[3] for r in recs_a)
    if rec_bad or structural:
        print("cmpdump: DIFFER: %d of %d records, %d elements differ%s" % (
            rec_bad, len(recs_a), elem_bad, " (record structure differs)" if structural else ""))
        return 1
    print("cmpdump: EQUAL: %d records, %d elements" % (len(recs_a), total))
    return 0


# ------------------------------------------------------------ self-test ----

def record(name, dtype, tol, vals):
    a = array.array(DTYPES[dtype][1], vals)
    if sys.byteorder != "little":
        a.byteswap()
    nb = name.encode()
    return struct.pack("<I", len(nb)) + nb + struct.pack("<IIQ", dtype, tol, len(vals)) + a.tobytes()


def selftest():
    def run(a, b):
        out = []
        try:
            ra, rb = parse(a, "A"), parse(b, "B")
        except BadInput:
            return 2
        rec_bad, _, structural = compare(ra, rb, out)
        return 1 if (rec_bad or structural) else 0

    base = (record("ints", 3, 0, [1, -2, 3]) + record("exact", 1, 0, [1.0, 2.5])
            + record("tol", 1, 1, [1.0, 100.0]) + record("bytes", 7, 0, [0, 255]))
    cases = [
        ("identical", base, base, 0),
        ("empty files", b"", b"", 0),
        ("int differs", base, base.replace(struct.pack("<i", -2), struct.pack("<i", -3)), 1),
        ("exact float 1 ulp", record("x", 1, 0, [1.0]), record("x", 1, 0, [1.0000001]), 1),
        ("exact -0 vs +0", record("x", 2, 0, [0.0]), record("x", 2, 0, [-0.0]), 1),
        ("tolerant within rel", record("x", 1, 1, [100.0]), record("x", 1, 1, [100.0005]), 0),
        ("tolerant beyond rel", record("x", 1, 1, [100.0]), record("x", 1, 1, [100.01]), 1),
        ("tolerant within abs", record("x", 2, 1, [0.0]), record("x", 2, 1, [5e-7]), 0),
        ("tolerant NaN==NaN", record("x", 2, 1, [float("nan")]), record("x", 2, 1, [float("nan")]), 0),
        ("tolerant inf", record("x", 2, 1, [float("inf")]), record("x", 2, 1, [1e308]), 1),
        ("name differs", record("x", 3, 0, [1]), record("y", 3, 0, [1]), 1),
        ("count differs", record("x", 3, 0, [1]), record("x", 3, 0, [1, 2]), 1),
        ("extra record", base, base + record("z", 6, 0, [7]), 1),
        ("truncated", base, base[:-1], 2),
        ("bad dtype", record("x", 3, 0, [1]), record("x", 3, 0, [1]).replace(
            struct.pack("<II", 3, 0), struct.pack("<II", 9, 0)), 2),
    ]
    failed = 0
    for name, a, b, want in cases:
        got = run(a, b)
        if got != want:
            print("selftest FAIL %s: got %d, want %d" % (name, got, want))
            failed += 1
    if failed:
        print("cmpdump selftest: %d of %d cases failed" % (failed, len(cases)))
        return 1
    print("cmpdump selftest: %d cases ok" % len(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
