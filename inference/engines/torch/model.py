"""Loading a model for the torch engine: a Hugging Face model directory (safetensors) or a
GGUF file that transformers dequantizes (`gguf_file=`), converted once and cached in the
data dir so the next start reads safetensors; the device (CUDA when present, else CPU,
with a fallback when CUDA runs out of memory). The adapter is lora.py's.

transformers refuses save_pretrained() on a GGUF-loaded model, so the cache holds the
config, the tokenizer and the state dict written by safetensors itself."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import ModelLoadError
from ..model_files import GGUF_MAGIC

logger = logging.getLogger(__name__)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
CACHE_MARKER = "converted-from.txt"


@dataclass
class LoadedModel:
    model: Any  # transformers PreTrainedModel (an adapter merged in: lora.py)
    tokenizer: Any
    device: str
    source: Path  # what was loaded: the HF dir, or the cached conversion of the GGUF


# Part of the cache key: a change to what _convert writes makes a new directory.
CONVERSION_VERSION = 3  # 2: no quantization_config; 3: the embedding saved, not lm_head


# (the float32 model on the CPU, a way to load it again) -> the model to serve: where an
# adapter is merged in, before placing (merged in float32, then halved on CUDA).
Adapt = Callable[[Any, Callable[[], Any]], Any]


def load_model(
    model_path: Path,
    data_dir: Path | None,
    device: str | None,
    n_threads: int,
    adapt: Adapt | None = None,
) -> LoadedModel:
    import torch

    torch.set_num_threads(n_threads)
    source = _hf_directory(model_path, data_dir)
    model = _load_pretrained(source)
    if adapt is not None:
        model = adapt(model, lambda: _load_pretrained(source))
    chosen = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model, chosen = _place(model, chosen)
    model.eval()
    return LoadedModel(model, _load_tokenizer(source), chosen, source)


def _hf_directory(model_path: Path, data_dir: Path | None) -> Path:
    if not model_path.exists():
        raise ModelLoadError(f"model not found: {model_path} (engine.model_path)")
    if model_path.is_dir():
        if not any((model_path / name).exists() for name in WEIGHT_FILES):
            raise ModelLoadError(
                f"the model directory {model_path} has no weights ({', '.join(WEIGHT_FILES)}): "
                "set engine.model_path to a Hugging Face model directory or a GGUF file"
            )
        return model_path
    with model_path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelLoadError(
                f"{model_path} is neither a Hugging Face model directory nor a GGUF file "
                "(engine.model_path)"
            )
    return _converted_gguf(model_path, data_dir)


def _converted_gguf(gguf: Path, data_dir: Path | None) -> Path:
    """The GGUF dequantized into a safetensors directory under data_dir, made once."""
    if data_dir is None:
        target = Path(tempfile.mkdtemp(prefix="shadowtab-torch-"))
        _convert(gguf, target)
        return target
    stat = gguf.stat()
    source = f"{gguf.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{CONVERSION_VERSION}"
    key = hashlib.sha256(source.encode())
    target = data_dir / "models" / "torch" / f"{gguf.stem}-{key.hexdigest()[:12]}"
    if (target / CACHE_MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    try:
        _convert(gguf, partial)
        (partial / CACHE_MARKER).write_text(f"{gguf}\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(partial, target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _convert(gguf: Path, target: Path) -> None:
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    except (ValueError, KeyError, RuntimeError, OSError, NotImplementedError) as exc:
        raise ModelLoadError(
            f"transformers cannot load the GGUF file {gguf} ({exc}); use engine.kind = "
            '"llama.cpp" for it, or point engine.model_path at a Hugging Face directory'
        ) from None
    # The weights are dequantized now: a quantization_config saying "gguf" would describe
    # the source file, not this directory (and vLLM refuses to load a directory with one).
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    model.config.save_pretrained(target)
    model.generation_config.save_pretrained(target)
    tokenizer.save_pretrained(target)
    save_file(_weights(model), str(target / "model.safetensors"))


def _weights(model: Any) -> dict[str, Any]:
    """The state dict without the lm_head when it is tied to the embedding: the embedding
    must stay under its own name (safetensors' save_model kept lm_head.weight instead,
    which transformers re-ties but vLLM does not: it served all-equal logits)."""
    state = {name: tensor.contiguous() for name, tensor in model.state_dict().items()}
    if getattr(model.config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)
    return state


def _load_pretrained(source: Path) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32)
    except (ValueError, KeyError, OSError) as exc:
        raise ModelLoadError(f"transformers cannot load {source}: {exc}") from None


def _load_tokenizer(source: Path) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(source))
    except (ValueError, KeyError, OSError) as exc:
        raise ModelLoadError(f"no usable tokenizer in {source}: {exc}") from None


def _place(model: Any, device: str) -> tuple[Any, str]:
    """The model on `device`; on CUDA in float16, back on the CPU when CUDA is out of
    memory (logged: the daemon keeps serving, slower)."""
    import torch

    if device == "cpu":
        return model, "cpu"
    try:
        return model.to(device=device, dtype=torch.float16), device
    except torch.OutOfMemoryError as exc:
        logger.warning("CUDA out of memory loading the model, using the CPU: %s", exc)
        torch.cuda.empty_cache()
        return model.to(device="cpu", dtype=torch.float32), "cpu"
