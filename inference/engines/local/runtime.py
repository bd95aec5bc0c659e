"""What the shared decoding, draft, generation and prefix cache need of a model runtime:
the llama.cpp runtime (llama_cpp/runtime.py) and the torch one (torch/runtime.py) both
implement it. A sequence is a numbered KV cache row set; positions are token indexes."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np
import numpy.typing as npt


class Interrupted(Exception):
    """A forward pass stopped part-way by Runtime.interrupt(): nothing of it was kept."""


class Runtime(Protocol):
    """One model with a KV cache of several sequences. Not thread-safe: the engine
    serializes calls."""

    add_bos: bool  # the tokenizer prepends BOS to a prompt
    # A pass of fewer rows than this costs more per row than one this long (0: no such
    # step): prefills are cut and padded to it (pass_plan.py).
    pass_tile: int

    def tokenize(self, text: str, add_bos: bool, special: bool = False) -> list[int]:
        """`special`: parse control-token text such as <|im_start|> (prompt templates)."""
        ...

    def piece(self, token: int) -> bytes: ...

    def is_end_of_generation(self, token: int) -> bool: ...

    def is_control(self, token: int) -> bool:
        """A control (special) token: a prompt template's marker, never text."""
        ...

    def vocab_size(self) -> int:
        """Token ids are 0..vocab_size()-1."""
        ...

    def decode(
        self, tokens: Sequence[int], seq: int, pos0: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` at positions pos0.. in `seq`; the logits rows of the batch
        indexes in `outputs` (ascending), shape (len(outputs), n_vocab)."""
        ...

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None: ...

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        """`dst` shares `src`'s positions [0, end)."""
        ...

    def kv_bytes_per_token(self) -> int:
        """What one cached token costs in the KV cache (the prefix cache's budget unit)."""
        ...

    def interruptible(self, owner: object | None = None) -> AbstractContextManager[None]:
        """Forward passes inside may be stopped part-way by interrupt(): decode then
        raises Interrupted and the sequence is as before the pass (warming; a cancelled
        request). `owner`: only interrupt(owner) stops them; None: any interrupt."""
        ...

    def interrupt(self, owner: object | None = None) -> None:
        """From any thread: stop the interruptible pass in flight, if any (and armed by
        `owner`, when given); outside interruptible() nothing (a runtime that cannot
        stop a pass ignores it)."""
        ...

    def close(self) -> None: ...
