#!/usr/bin/env bash
# A venv whose llama.cpp runs its AVX2 kernels only (no AVX-512), for estimating on an
# AVX-512 machine what an AVX2-only CPU gets: together with scripts/run_slower.sh, which
# slows the whole run down to that CPU's measured speed (docs/MEASUREMENTS.md, twelfth
# session, says how and how far such an estimate goes). Not a measurement on an AVX2 CPU.
#
#   scripts/build_avx2_venv.sh [VENV]    (default: /tmp/avx2venv; ~10 min on 2 cores)
#
# The venv sees this Python's site packages and this checkout (editable), with its own
# llama-cpp-python compiled without AVX-512. Nothing is written into the repository.
set -euo pipefail
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
venv="${1:-/tmp/avx2venv}"
root="$(cd "$(dirname "$0")/.." && pwd)"
python3 -m venv --system-site-packages "$venv"
# pip caches wheels by source, not by CMAKE_ARGS: without --no-cache-dir it would reuse
# the native (AVX-512) wheel built for the main environment.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF" \
CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" \
    "$venv/bin/pip" install --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$version" >&2
"$venv/bin/pip" install --no-deps -e "$root" >&2
"$venv/bin/python" - <<'PY'
import llama_cpp

info = llama_cpp.llama_print_system_info().decode()
assert "AVX2 = 1" in info and "AVX512 = 1" not in info, info
print("AVX2 kernels only:", info)
PY
echo "$venv/bin/python"
