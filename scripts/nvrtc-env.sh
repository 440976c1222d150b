# nvrtc-env.sh: sourced by the GPU scripts. Finds NVRTC and the CUDA headers
# for slatec's runtime on the GPU machine (which has a CUDA toolkit but not
# the project prefix .cuda/) and exports SLATEC_LIBNVRTC and
# SLATEC_CUDA_INCLUDE (runtime/doc.go), unless they are set or the carried
# prefix has them (runtime/gpu-test.sh, corun-gpu.sh, merge-gpu.sh source it).
prefix=${SLATEC_CUDA_PREFIX:-$PWD/.cuda}
if [ -z "${SLATEC_LIBNVRTC:-}" ] && [ ! -e "$prefix/nvidia/cu13/lib/libnvrtc.so.13" ]; then
  cands=()
  if nvcc=$(command -v nvcc 2>/dev/null); then
    tk=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
    cands+=("$tk/lib64" "$tk/lib" "$tk/targets/x86_64-linux/lib")
  fi
  cands+=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
  if py=$(python3 -c 'import nvidia, os; print(os.pathsep.join(nvidia.__path__))' 2>/dev/null); then
    IFS=: read -r -a pyd <<<"$py"
    for p in "${pyd[@]}"; do cands+=("$p/cu13/lib" "$p/cuda_nvrtc/lib"); done
  fi
  for d in "${cands[@]}"; do
    for f in "$d"/libnvrtc.so.13 "$d"/libnvrtc.so.12 "$d"/libnvrtc.so; do
      if [ -e "$f" ]; then export SLATEC_LIBNVRTC=$f; break 2; fi
    done
  done
  if [ -z "${SLATEC_LIBNVRTC:-}" ]; then
    f=$(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so\.1[23] /{print $NF; exit}')
    [ -n "$f" ] && export SLATEC_LIBNVRTC=$f
  fi
  if [ -z "${SLATEC_CUDA_INCLUDE:-}" ] && [ -n "${tk:-}" ] && [ -d "$tk/include" ]; then
    inc=$tk/include
    [ -d "$tk/include/cccl" ] && inc=$inc:$tk/include/cccl
    export SLATEC_CUDA_INCLUDE=$inc
  fi
fi
