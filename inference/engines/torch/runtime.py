"""The torch engine's runtime: the same operations as the llama.cpp runtime (decode into a
sequence, remove, copy, tokenize, token bytes), so the llama.cpp engine's decoding, draft
cursor and prefix cache run unchanged on it. A sequence is a transformers DynamicCache;
removing the tail crops it, copying forks it up to a length."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .model import LoadedModel


@dataclass(frozen=True)
class TorchShape:
    n_layer: int
    n_head_kv: int
    head_dim: int
    n_vocab: int
    bytes_per_element: int

    def kv_bytes_per_token(self) -> int:
        """K and V for every layer and KV head, in the cache's own dtype (GQA: fewer)."""
        return self.n_layer * self.n_head_kv * self.head_dim * 2 * self.bytes_per_element


def _shape(model: Any) -> TorchShape:
    config = model.config
    n_head = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // n_head
    return TorchShape(
        n_layer=config.num_hidden_layers,
        n_head_kv=getattr(config, "num_key_value_heads", None) or n_head,
        head_dim=head_dim,
        n_vocab=config.vocab_size,
        bytes_per_element=next(model.parameters()).element_size(),
    )


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: token characters back to bytes."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


class TorchRuntime:
    """Not thread-safe: the engine serializes calls."""

    def __init__(self, loaded: LoadedModel) -> None:
        import torch

        self._torch = torch
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.device = loaded.device
        self.shape = _shape(self.model)
        self.add_bos = bool(getattr(self.tokenizer, "add_bos_token", False))
        self.pass_tile = 0  # no pass length is cheaper per row than a shorter one
        self._caches: dict[int, Any] = {}
        self._eog = self._end_tokens()
        self._special = frozenset(int(t) for t in self.tokenizer.all_special_ids)
        self._pieces = self._piece_table()
        # transformers >= 5.2x names the argument `cache` (`past_key_values` deprecated)
        params = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    # tokens and text

    def tokenize(self, text: str, add_bos: bool, special: bool = False) -> list[int]:
        ids = self.tokenizer(
            text, add_special_tokens=add_bos, split_special_tokens=not special
        ).input_ids
        return [int(t) for t in ids]

    def piece(self, token: int) -> bytes:
        return self._pieces[token] if 0 <= token < len(self._pieces) else b""

    def is_end_of_generation(self, token: int) -> bool:
        return token in self._eog

    def is_control(self, token: int) -> bool:
        return token in self._special

    def vocab_size(self) -> int:
        return len(self._pieces)

    def _end_tokens(self) -> frozenset[int]:
        ids: set[int] = set()
        for source in (self.model.generation_config.eos_token_id, self.tokenizer.eos_token_id):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, list):
                ids.update(int(t) for t in source)
        return frozenset(ids)

    def _piece_table(self) -> list[bytes]:
        """Each token's bytes: byte-level BPE (GPT-2 style) maps characters back to bytes;
        other tokenizers decode the token alone. Special tokens keep their text."""
        byte_level = "ByteLevel" in str(getattr(self.tokenizer, "backend_tokenizer", ""))
        decoder = _byte_decoder()
        table: list[bytes] = []
        names = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        for token_id, name in enumerate(names):
            if name is None:
                table.append(b"")
            elif token_id in self._special or not byte_level or any(c not in decoder for c in name):
                table.append(self.tokenizer.decode([token_id]).encode())
            else:
                table.append(bytes(decoder[c] for c in name))
        return table

    # sequences

    def decode(
        self, tokens: Sequence[int], seq: int, pos0: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` at positions pos0.. of `seq` (which holds exactly pos0 tokens);
        the logits rows at the batch indices `outputs`, as float32 on the CPU."""
        torch = self._torch
        cache = self._cache(seq)
        if cache.get_seq_length() != pos0:
            raise RuntimeError(f"sequence {seq} holds {cache.get_seq_length()} tokens, not {pos0}")
        ids = torch.tensor([list(tokens)], dtype=torch.long, device=self.device)
        positions = torch.arange(pos0, pos0 + len(tokens), device=self.device)
        with torch.inference_mode():
            out = self.model(
                input_ids=ids,
                **{self._cache_arg: cache},
                use_cache=True,
                cache_position=positions,
                logits_to_keep=torch.tensor(list(outputs), dtype=torch.long, device=self.device)
                if outputs
                else 1,
            )
        if not outputs:
            return np.empty((0, self.shape.n_vocab), dtype=np.float32)
        return out.logits[0].float().cpu().numpy()

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None:
        """Drop positions start.. (only tails: as the prefix cache and the decoders do)."""
        if end != -1:
            raise ValueError("the torch runtime removes only a sequence's tail")
        if start <= 0:
            self._caches.pop(seq, None)
        elif seq in self._caches:
            _crop_to(self._caches[seq], start)

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        fork = copy.deepcopy(self._cache(src))
        _crop_to(fork, end)
        self._caches[dst] = fork

    def kv_bytes_per_token(self) -> int:
        return self.shape.kv_bytes_per_token()

    def seq_state_bytes(self, seq: int) -> int:
        cache = self._caches.get(seq)
        if cache is None:
            return 0
        return sum(t.numel() * t.element_size() for t in _cache_tensors(cache))

    def clear(self) -> None:
        self._caches.clear()

    def _cache(self, seq: int) -> Any:
        if seq not in self._caches:
            from transformers import DynamicCache

            self._caches[seq] = DynamicCache(config=self.model.config)
        return self._caches[seq]

    def interruptible(self, owner: object | None = None) -> AbstractContextManager[None]:
        """Passes are not stopped part-way here (a GPU pass is short; a CPU one is
        warming's only cost)."""
        return nullcontext()

    def interrupt(self, owner: object | None = None) -> None:
        pass

    def close(self) -> None:
        self._caches.clear()
        self.model = None


def _crop_to(cache: Any, length: int) -> None:
    """Keep the first `length` positions (transformers 5: crop(-n) removes n tokens)."""
    extra = int(cache.get_seq_length()) - length
    if extra > 0:
        cache.crop(-extra)


def _cache_tensors(cache: Any) -> list[Any]:
    tensors = []
    for layer in getattr(cache, "layers", []):
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if tensor is not None and hasattr(tensor, "numel"):
                tensors.append(tensor)
    return tensors
