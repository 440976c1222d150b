#!/usr/bin/env bash
# End-to-end trial on a real multi-file program written by others:
# karpathy/llm.c's GPT-2 training program, train_gpt2.cu and the llmc/
# headers it includes (24 kernels in 9 headers; fetched read-only into
# .realworld/llm.c-train, never committed: SOURCES.txt there lists each
# file's commit). The program is transformed as a whole (every header in
# one run), built as published and transformed, and both train a GPT-2 of
# 12 layers from the same random initialisation on the same synthetic
# tokens; every step's loss and gradient norm, and the validation losses,
# must agree. A third build counts executions per logical block
# (-DSLATE_TEST_HOOKS, SLATE_COUNT=1) for a few steps.
#
#   scripts/llmc-train-trial.sh transform   # here: .realworld/llmc-train-out with the slatec binary
#   scripts/llmc-train-trial.sh run         # on the GPU machine: $OUT/llmc-train.txt and the logs
#
# Knobs: STEPS (30), B (8), T (256), ARCH (sm_90), RTOL for the loss
# comparison (1e-3; the program's kernels are deterministic, so equal
# losses are the expectation, and a worker that changes a reduction's
# order would show as a small difference).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/trial.sh
. scripts/lib/trial.sh
SRC=${SRC:-.realworld/llm.c-train}
OUTDIR=${OUTDIR:-.realworld/llmc-train-out}
OUT=${OUT:-$PWD/.work/llmc-train-out}
STEPS=${STEPS:-30}
B=${B:-8}
T=${T:-256}
flags="-std=c++17 -O3 -t=0 --use_fast_math -arch=$ARCH"
libs="-lcublas -lcublasLt"

case "${1:-}" in
transform)
    trial_outdir
    # From inside SRC, so that the outputs keep the program's layout.
    (cd "$SRC" && "$slatec" transform -o "$outdir" train_gpt2.cu llmc/*.h llmc/*.cuh) || exit 1
    echo "transformed: $(cat "$OUTDIR"/train_gpt2.cu "$OUTDIR"/llmc/* | grep -c '__slate(slate_ctl') kernels"
    ;;
run)
    mkdir -p "$OUT"
    W=/tmp/slatec-llmc-train
    rm -rf "$W"
    mkdir -p "$W"
    # The three builds at once (nvcc takes about a minute for each).
    $NVCC $flags -I"$SRC" -o "$W/train.orig" "$SRC/train_gpt2.cu" $libs >"$W/orig.build" 2>&1 &
    $NVCC $flags -I"$OUTDIR" -o "$W/train.slate" "$OUTDIR/train_gpt2.cu" $libs >"$W/slate.build" 2>&1 &
    $NVCC $flags -DSLATE_TEST_HOOKS -I"$OUTDIR" -o "$W/train.hooks" "$OUTDIR/train_gpt2.cu" $libs >"$W/hooks.build" 2>&1 &
    wait
    for b in orig slate hooks; do
        [ -x "$W/train.$b" ] || { echo "$b does not build:"; grep -m3 error "$W/$b.build"; }
    done
    # Synthetic token shards in the loader's format: 256 int32 of header
    # (magic 20240520, version 1, token count), then uint16 tokens.
    python3 - "$W" <<'PY'
import random, struct, sys
w = sys.argv[1]
rng = random.Random(1234)
for name, n in (("train.bin", 1 << 20), ("val.bin", 1 << 16)):
    header = [20240520, 1, n] + [0] * 253
    # A skewed vocabulary, so the loss falls as the model learns it.
    toks = [min(int(rng.expovariate(1 / 300.0)), 50256) for _ in range(n)]
    with open(f"{w}/{name}", "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack(f"<{n}H", *toks))
PY
    args="-i $W/train.bin -j $W/val.bin -e d12 -b $B -t $T -d $((B * T)) -x $STEPS -v 10 -m 4 -s 0 -h 0 -y 0"
    for b in orig slate; do
        [ -x "$W/train.$b" ] || continue
        (cd "$W" && timeout 300 "./train.$b" $args >"$W/$b.log" 2>&1); echo "$b exit $?" >>"$W/$b.log"
    done
    if [ -x "$W/train.hooks" ]; then
        (cd "$W" && SLATE_COUNT=1 timeout 300 ./train.hooks ${args/-x $STEPS/-x 3} >"$W/hooks.log" 2>&1); echo "hooks exit $?" >>"$W/hooks.log"
    fi
    python3 - "$W" "${RTOL:-1e-3}" >"$OUT/llmc-train.txt" <<'PY'
import re, sys
w, rtol = sys.argv[1], float(sys.argv[2])
def parse(name):
    try:
        text = open(f"{w}/{name}.log", errors="replace").read()
    except OSError:
        return None
    steps = {int(m.group(1)): (float(m.group(2)), float(m.group(3)), float(m.group(4)))
             for m in re.finditer(r"step\s+(\d+)/\d+ \| loss ([-\d.na]+) \([^)]*\)\| norm ([-\d.na]+) \([^)]*\)\|.*?\| ([\d.]+) ms", text)}
    vals = [float(v) for v in re.findall(r"val loss ([-\d.na]+)", text)]
    rc = re.search(rf"{name} exit (\d+)", text)
    return {"steps": steps, "vals": vals, "rc": int(rc.group(1)) if rc else None, "text": text}
o, s, h = parse("orig"), parse("slate"), parse("hooks")
ok = True
def close(a, b):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-6)
print(f"{'step':>5} {'loss orig':>12} {'loss slate':>12} {'norm orig':>10} {'norm slate':>10} {'ms orig':>8} {'ms slate':>8}")
for k in sorted(set(o["steps"]) | set(s["steps"]) if o and s else []):
    a, b = o["steps"].get(k), s["steps"].get(k)
    if a is None or b is None:
        print(f"{k:>5} missing in {'orig' if a is None else 'slate'}"); ok = False; continue
    same = close(a[0], b[0]) and close(a[1], b[1])
    ok &= same
    print(f"{k:>5} {a[0]:12.6f} {b[0]:12.6f} {a[1]:10.4f} {b[1]:10.4f} {a[2]:8.2f} {b[2]:8.2f}{'' if same else '  DIFFERENT'}")
if o and s:
    print("val loss orig ", o["vals"]); print("val loss slate", s["vals"])
    if len(o["vals"]) != len(s["vals"]) or not all(close(x, y) for x, y in zip(o["vals"], s["vals"])):
        ok = False; print("val losses DIFFERENT")
    ks = sorted(k for k in o["steps"] if k > 1 and k in s["steps"])
    if ks:
        mo = sorted(o["steps"][k][2] for k in ks)[len(ks) // 2]
        ms = sorted(s["steps"][k][2] for k in ks)[len(ks) // 2]
        print(f"median step time after the first: orig {mo:.2f} ms, slate {ms:.2f} ms, ratio {ms / mo:.3f}")
    if len(o["steps"]) == 0:
        ok = False; print("no steps parsed from the original's log")
for name, r in (("orig", o), ("slate", s), ("hooks", h)):
    if r is None:
        ok = False; print(f"{name}: no log")
    elif r["rc"] != 0:
        ok = False; print(f"{name}: exit {r['rc']}"); print("\n".join(r["text"].splitlines()[-8:]))
print("llmc-train:", "PASS" if ok else "FAIL")
PY
    tar cJf "$OUT/llmc-train-logs.tar.xz" -C "$W" orig.log slate.log hooks.log orig.build slate.build hooks.build 2>/dev/null
    cat "$OUT/llmc-train.txt"
    ;;
*)
    echo "usage: $0 transform|run" >&2
    exit 2
    ;;
esac
