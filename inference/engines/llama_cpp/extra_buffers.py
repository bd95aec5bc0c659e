"""llama.cpp loads weights without its extra buffer types (AMX tiles, repacked layouts).

On an Intel Xeon with AMX (amx_int8 in the CPU flags, tile state granted to the
process), the llama.cpp of llama-cpp-python 0.3.36, built for that CPU, puts the
packaged model's Q4_1 and Q8_0 weights in its AMX buffer and crashes (SIGSEGV) in the
first decode. Left off, the weights stay in llama.cpp's plain CPU layout everywhere.

The engine sets it on the parameters it builds (`without_extra_buffers`). Code that goes
through llama-cpp-python's high-level `Llama` (its OpenAI-compatible server, the
training tools, tests) cannot pass it, as `Llama` takes no such argument:
`use_plain_buffers_in_llama_class` makes `Llama` build its parameters this way."""

from __future__ import annotations

import llama_cpp
import llama_cpp.llama_cpp as native

_library_defaults = native.llama_model_default_params


def without_extra_buffers(params: llama_cpp.llama_model_params) -> llama_cpp.llama_model_params:
    params.use_extra_bufts = False
    return params


def _defaults_without_extra_buffers() -> llama_cpp.llama_model_params:
    return without_extra_buffers(_library_defaults())


def use_plain_buffers_in_llama_class() -> None:
    """From now on in this process, every `llama_cpp.Llama` loads its weights without
    extra buffer types (Llama reads llama_model_default_params from this module)."""
    native.llama_model_default_params = _defaults_without_extra_buffers
