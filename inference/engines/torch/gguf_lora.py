"""A llama.cpp GGUF LoRA adapter read back into peft's terms: the rank, alpha and target
modules of a `LoraConfig`, and the A/B matrices under peft's state-dict names.

The file is laid out as llama.cpp's `convert_lora_to_gguf.py` (and training/export.py)
write it: `<base tensor>.lora_a` (rank x in) and `.lora_b` (out x rank) per target, with
the rows of B of attn_q/attn_k rope-permuted as llama.cpp stores those projections;
transformers un-permutes the base weights when it reads a llama GGUF, so the same is
undone here for B. Pure numpy and the `gguf` package: no torch, no llama.cpp."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..adapter_files import FORMAT_KEY, SETTING, AdapterError, check_gguf_file

# llama.cpp's tensor names (llama architecture) -> the Hugging Face module under a layer
HF_MODULES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
# The architectures whose q/k projections llama.cpp's converter rope-permutes (and
# transformers un-permutes on load): only there is B permuted back.
PERMUTED_ARCHITECTURES = frozenset({"llama"})
GGUF_NAME = re.compile(r"^blk\.(\d+)\.(\w+)\.weight\.lora_([ab])$")
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class LoraPair:
    a: Matrix  # rank x in (peft's lora_A.weight)
    b: Matrix  # out x rank (peft's lora_B.weight), in Hugging Face row order


@dataclass
class GgufLora:
    path: Path
    architecture: str
    alpha: float
    rank: int
    prompt_format: str | None  # FORMAT_KEY, None when the file names none
    name: str | None
    pairs: dict[str, LoraPair] = field(default_factory=dict)  # HF module path -> A, B

    @property
    def target_modules(self) -> list[str]:
        """peft's target_modules: the short names (q_proj, ...) the adapter covers."""
        return sorted({module.rsplit(".", 1)[-1] for module in self.pairs})

    def peft_state(self) -> dict[str, Matrix]:
        """peft's state-dict names, as `save_pretrained` writes them (no adapter name)."""
        state: dict[str, Matrix] = {}
        for module, pair in self.pairs.items():
            state[f"base_model.model.{module}.lora_A.weight"] = pair.a
            state[f"base_model.model.{module}.lora_B.weight"] = pair.b
        return state


def fail(path: Path, why: str) -> AdapterError:
    return AdapterError(f"{SETTING} = {str(path)!r}: {why}")


def read_gguf_lora(path: Path, n_head: int, n_head_kv: int) -> GgufLora:
    """The adapter at `path` for a base model with `n_head` query and `n_head_kv` KV heads
    (the q/k un-permutation needs them). Raises AdapterError naming the setting for a
    missing, corrupt, truncated or non-LoRA file."""
    check_gguf_file(path)
    reader = _open_reader(path)
    meta = _metadata(reader, path)
    raw = _raw_tensors(reader, path)
    lora = GgufLora(
        path=path,
        architecture=meta["general.architecture"],
        alpha=float(meta["adapter.lora.alpha"]),
        rank=0,
        prompt_format=meta.get(FORMAT_KEY),
        name=meta.get("general.name"),
    )
    permute = lora.architecture in PERMUTED_ARCHITECTURES
    heads = {"attn_q": n_head, "attn_k": n_head_kv}
    for (layer, kind), (a, b) in sorted(raw.items()):
        if permute and kind in heads:
            try:
                b = unpermute_rows(b, heads[kind])
            except ValueError as exc:
                why = f"does not fit the base model (blk.{layer}.{kind}: {exc})"
                raise fail(path, why) from None
        lora.pairs[f"model.layers.{layer}.{HF_MODULES[kind]}"] = LoraPair(a, b)
    lora.rank = _rank(lora, path)
    return lora


def permute_rows(weight: Matrix, n_head: int) -> Matrix:
    """llama.cpp's rope permutation of a q/k projection's output rows (as its converter
    writes them; transformers undoes it on load)."""
    rows = weight.shape[0]
    if rows % (2 * n_head):
        raise ValueError(f"{rows} rows do not split into {n_head} heads")
    return np.ascontiguousarray(
        weight.reshape(n_head, 2, rows // n_head // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def unpermute_rows(weight: Matrix, n_head: int) -> Matrix:
    """The inverse of llama.cpp's rope permutation of a q/k projection's output rows."""
    rows = weight.shape[0]
    if rows % (2 * n_head):
        raise ValueError(f"{rows} rows do not split into {n_head} heads")
    return np.ascontiguousarray(
        weight.reshape(n_head, rows // n_head // 2, 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def _open_reader(path: Path) -> Any:
    try:
        import gguf
    except ImportError:
        raise fail(path, "reading a GGUF LoRA adapter needs the gguf package") from None
    try:
        return gguf.GGUFReader(str(path), "r")
    except (ValueError, IndexError, KeyError, OSError, OverflowError) as exc:
        # a truncated file ends inside a header or a tensor: numpy's memmap says so
        raise fail(path, f"not a readable GGUF file (corrupt or truncated: {exc})") from None


def _metadata(reader: Any, path: Path) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, reader_field in reader.fields.items():
        try:
            values[key] = reader_field.contents()
        except (ValueError, IndexError, UnicodeDecodeError):
            continue  # a field we do not need, in a type we do not read
    if values.get("general.type") != "adapter" or values.get("adapter.type") != "lora":
        raise fail(path, "a GGUF file, but not a LoRA adapter (general.type, adapter.type)")
    if not isinstance(values.get("adapter.lora.alpha"), int | float):
        raise fail(path, "a LoRA adapter without adapter.lora.alpha")
    values.setdefault("general.architecture", "llama")
    return values


def _raw_tensors(reader: Any, path: Path) -> dict[tuple[int, str], tuple[Matrix, Matrix]]:
    """(layer, llama.cpp kind) -> (A, B) as float32, in the file's (llama.cpp) row order."""
    from gguf.quants import dequantize

    found: dict[tuple[int, str, str], Matrix] = {}
    for tensor in reader.tensors:
        match = GGUF_NAME.match(tensor.name)
        if match is None or match.group(2) not in HF_MODULES:
            raise fail(path, f"tensor {tensor.name!r} is not a LoRA tensor of a known layer")
        shape = tuple(int(d) for d in reversed(tensor.shape))  # GGUF lists innermost first
        try:
            value = dequantize(tensor.data, tensor.tensor_type).reshape(shape)
        except (ValueError, NotImplementedError) as exc:
            raise fail(path, f"tensor {tensor.name!r} cannot be read: {exc}") from None
        found[(int(match.group(1)), match.group(2), match.group(3))] = value.astype(np.float32)
    if not found:
        raise fail(path, "a LoRA adapter without tensors")
    pairs: dict[tuple[int, str], tuple[Matrix, Matrix]] = {}
    for layer, kind, _ in found:
        a, b = found.get((layer, kind, "a")), found.get((layer, kind, "b"))
        if a is None or b is None:
            raise fail(path, f"blk.{layer}.{kind} has lora_a or lora_b missing")
        pairs[(layer, kind)] = (a, b)
    return pairs


def _rank(lora: GgufLora, path: Path) -> int:
    ranks = {pair.a.shape[0] for pair in lora.pairs.values()}
    ranks |= {pair.b.shape[1] for pair in lora.pairs.values()}
    if len(ranks) != 1:
        raise fail(path, f"LoRA ranks differ between tensors ({sorted(ranks)})")
    return ranks.pop()
