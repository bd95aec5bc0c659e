"""Requantized copies of a GGUF file (e.g. the packaged Q4_1 to Q8_0), made once by
llama.cpp's quantizer and cached in the data dir."""

from __future__ import annotations

import ctypes
from pathlib import Path

from ..api import ModelLoadError
from ..model_files import made_once
from ..settings import REQUANTIZE_TYPES


def requantized_path(source: Path, quant: str, cache_dir: Path) -> Path:
    return cache_dir / f"{source.stem}.requant-{quant}.gguf"


def requantize(source: Path, quant: str, cache_dir: Path, n_threads: int) -> Path:
    """The requantized copy of `source`, made on first use."""
    if quant not in REQUANTIZE_TYPES:
        known = sorted(REQUANTIZE_TYPES)
        raise ModelLoadError(f"unknown quantization {quant!r}; known: {known}")

    def write(out: Path) -> None:
        import llama_cpp

        params = llama_cpp.llama_model_quantize_default_params()
        params.nthread = n_threads
        params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{quant.upper()}")
        params.allow_requantize = True
        status = llama_cpp.llama_model_quantize(
            str(source).encode(), str(out).encode(), ctypes.byref(params)
        )
        if status != 0:
            raise ModelLoadError(f"requantizing {source} to {quant} failed (status {status})")

    return made_once(requantized_path(source, quant, cache_dir), write)
