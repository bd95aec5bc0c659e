"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, the same
arguments) with the weights loaded as our engine loads them, without llama.cpp's extra
buffer types (inference/engines/llama_cpp/extra_buffers.py says why). Run by its path:
`LLAMA_CPP_SERVER` in serving.py is the command."""

from __future__ import annotations

from llama_cpp.server.__main__ import main
from shadowtab.inference.engines.llama_cpp.extra_buffers import use_plain_buffers_in_llama_class

if __name__ == "__main__":
    use_plain_buffers_in_llama_class()
    main()
