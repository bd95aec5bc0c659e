#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` from the llama.cpp source vendored in the
# llama-cpp-python sdist the project pins (the same llama.cpp our engine runs), for
# benchmarks/vs_llama_server.py. CI does not run this: the benchmark skips without a binary.
#
#   scripts/build_llama_server.sh [OUT_DIR]    (default: /tmp/llama-server-bin)
#
# Prints the binary's path on its last line; pass it as
#   python -m benchmarks.vs_llama_server --server-bin PATH   (or SHADOWTAB_LLAMA_SERVER=PATH)
# Nothing is written into the repository. JOBS (default 2) sets the build's parallelism.
set -euo pipefail
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
out="${1:-/tmp/llama-server-bin}"
jobs="${JOBS:-2}"
work="${BUILD_DIR:-/tmp/llama-server-build}"
mkdir -p "$work" "$out"
sdist="$work/llama_cpp_python-$version.tar.gz"
if [ ! -f "$sdist" ]; then
    pip download --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work" >&2
fi
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
[ -d "$src" ] || tar -xzf "$sdist" -C "$work"
# Native kernels as llama-cpp-python builds them here; no network at build time (no prebuilt
# web UI from Hugging Face, no curl/OpenSSL model downloads); only the server target.
cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    -DBUILD_SHARED_LIBS=OFF >&2
nice -n 10 cmake --build "$src/build" --target llama-server -j "$jobs" >&2
cp "$src/build/bin/llama-server" "$out/llama-server"
"$out/llama-server" --version >&2 || true
echo "$out/llama-server"
