#!/usr/bin/env bash
# Installs nvcc and NVRTC from NVIDIA's PyPI wheels into a project-local
# prefix (.cuda/), so that CI and fresh clones compile CUDA with nothing
# installed by hand. Versions are pinned: CUDA 13.0, the newest release the
# lent GPU machines' driver (580) runs without forward compatibility.
set -euo pipefail
prefix=${1:-.cuda}
stamp="$prefix/.stamp-13.0.88"
if [ -f "$stamp" ]; then exit 0; fi
py=${PYTHON:-python3}
rm -rf "$prefix"
"$py" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
  --target "$prefix" \
  nvidia-cuda-nvcc==13.0.88 \
  nvidia-cuda-crt==13.0.88 \
  nvidia-nvvm==13.0.88 \
  nvidia-cuda-cccl==13.0.85 \
  nvidia-cuda-runtime==13.0.96 \
  nvidia-cuda-nvrtc==13.0.88 2>&1 | grep -v "^WARNING: Running pip as" || true
test -x "$prefix/nvidia/cu13/bin/nvcc" || { echo "cuda-tools: nvcc missing after install" >&2; exit 1; }
touch "$stamp"
echo "cuda-tools: nvcc $("$prefix/nvidia/cu13/bin/nvcc" --version | tail -2 | head -1)"
