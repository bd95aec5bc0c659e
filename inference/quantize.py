"""Requantizing a GGUF model (e.g. the packaged Q4_1 to Q8_0) once, cached in the data dir."""

from __future__ import annotations

import ctypes
import os
import tempfile
from pathlib import Path

import llama_cpp

from .errors import ModelLoadError

QUANT_TYPES = {"q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, "q4_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0}


def requantized_path(source: Path, quant: str, cache_dir: Path) -> Path:
    return cache_dir / f"{source.stem}.requant-{quant}.gguf"


def requantize(source: Path, quant: str, cache_dir: Path, n_threads: int) -> Path:
    """The requantized copy of `source`, made on first use (atomically: temp file, rename)."""
    if quant not in QUANT_TYPES:
        raise ModelLoadError(f"unknown quantization {quant!r}; known: {sorted(QUANT_TYPES)}")
    target = requantized_path(source, quant, cache_dir)
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, suffix=".partial")
    os.close(fd)
    params = llama_cpp.llama_model_quantize_default_params()
    params.nthread = n_threads
    params.ftype = QUANT_TYPES[quant]
    params.allow_requantize = True
    try:
        status = llama_cpp.llama_model_quantize(
            str(source).encode(), tmp_name.encode(), ctypes.byref(params)
        )
        if status != 0:
            raise ModelLoadError(f"requantizing {source} to {quant} failed (status {status})")
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return target
