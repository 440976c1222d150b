#!/usr/bin/env bash
# A multi-file project transformed as a whole must build and link: kernels
# defined in testdata/project/kernels/scale.cu, declared in
# testdata/project/include/scale.cuh, launched from testdata/project/main.cu;
# one reads the block index through a class of include/tile.cuh.
# Run on the GPU machine, the built program checks its own result (PASS).
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=${NVCC:-.cuda/nvidia/cu13/bin/nvcc}
slatec=${SLATEC:-./slatec}
libdir=$(dirname "$(dirname "$(command -v "$nvcc")")")/lib   # the wheels' static runtime
libflag=""; [ -f "$libdir/libcudart_static.a" ] && libflag="-L$libdir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$slatec" transform -o "$out/" testdata/project/main.cu testdata/project/kernels/scale.cu testdata/project/include/scale.cuh testdata/project/include/tile.cuh
p=$out/testdata/project
grep -q 'scale__slate_launch(' "$p/main.cu" || { echo "project-check: main.cu's launch was not rewritten"; exit 1; }
grep -q 'index__slate(const uint3 blockIdx' "$p/include/tile.cuh" || { echo "project-check: tile.cuh has no copy of Tile::index"; exit 1; }
"$nvcc" -std=c++17 -arch=sm_90 $libflag -o "$out/app" "$p/main.cu" "$p/kernels/scale.cu"
echo "project-check: the transformed 3-file project builds and links"
if [ -n "${RUN:-}" ]; then SLATE_MODE=persistent "$out/app"; fi
