"""Which prompt prefixes stay resident in the KV cache: one sequence per prefix,
longest-common-prefix lookup, LRU eviction under a token budget; sequences lent to a
request for its extra candidates.

Bookkeeping only; the native operations go through `SequenceOps` (the runtime)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..api import CacheInfo


class SequenceOps(Protocol):
    def seq_remove(self, seq: int, start: int, end: int = -1) -> None: ...

    def seq_copy(self, src: int, dst: int, end: int) -> None: ...


@dataclass
class ResidentPrefix:
    seq: int
    tokens: list[int] = field(default_factory=list)  # exactly what the KV holds, from pos 0
    prompt_length: int = 0  # of the last request placed here (the rest was generated)
    last_used: int = 0


@dataclass(frozen=True)
class Placement:
    seq: int
    reused: int  # tokens already in the KV for this request


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0]) if diff.size else n


def _begins(short: Sequence[int], long: Sequence[int]) -> bool:
    """`short` is a prefix of `long` (equal included)."""
    return len(short) <= len(long) and common_prefix_length(short, long) == len(short)


# A newer version of a prompt may add this many tokens more than it drops (a line typed):
# more than that, it is another prompt branching off the resident one.
NEWER_VERSION_GROWTH = 16


class PrefixCache:
    """Maps resident prefixes to sequence ids 0..n_slots-1.

    A request continues the sequence sharing its longest prefix in place when it mostly
    extends it (the next keystroke in the same document); when it shares only a small head
    (another document with the same instructions) the head is forked into a free sequence.
    Accounting counts each sequence's tokens (a fork holds its own copy of the head).
    A pinned sequence (a request in progress, e.g. a rewrite that lent the engine to a
    plain continuation) is only read by others: never trimmed, taken over or evicted."""

    def __init__(self, ops: SequenceOps, n_slots: int, capacity_tokens: int, n_cells: int) -> None:
        self._ops = ops
        self._slots: dict[int, ResidentPrefix] = {}
        self._n_slots = n_slots
        self.capacity_tokens = capacity_tokens
        self._n_cells = n_cells
        self._clock = 0
        self._pinned: set[int] = set()

    def used_tokens(self) -> int:
        return sum(len(prefix.tokens) for prefix in self._slots.values())

    def info(self, bytes_per_token: int) -> CacheInfo:
        recent = sorted(self._slots.values(), key=lambda p: -p.last_used)
        return CacheInfo(
            bytes_per_token=bytes_per_token,
            capacity_tokens=self.capacity_tokens,
            used_tokens=self.used_tokens(),
            resident_prefixes=[len(p.tokens) for p in recent if p.tokens],
        )

    def place(
        self, prompt: Sequence[int], total_tokens: int, need_logits: bool = True
    ) -> Placement:
        """Pick (and prepare) the sequence for a request of `prompt` that may grow to
        `total_tokens`. With `need_logits` the last prompt token is left to evaluate."""
        best, shared = self._best_match(prompt)
        shared = min(shared, len(prompt) - 1 if need_logits else len(prompt))
        in_use = best is not None and best.seq in self._pinned
        if best is not None and not in_use and self._continue_in_place(best, shared, len(prompt)):
            self._trim(best, shared)
            target = best
        else:
            target = self._free_slot(exclude=best)
            if best is not None and shared > 0:
                self._ops.seq_copy(best.seq, target.seq, shared)
                target.tokens = list(best.tokens[:shared])
            else:
                shared = 0
        target.prompt_length = len(prompt)
        self._touch(target)
        self._make_room(target, total_tokens)
        return Placement(seq=target.seq, reused=shared)

    def continuation(self, prompt: Sequence[int], limit: int) -> list[int]:
        """What the model wrote after an earlier prompt that `prompt` extends, where a
        resident prefix holds all of `prompt` and goes on with generated tokens: at most
        `limit` of the tokens that follow `prompt` there ([] where none does)."""
        best: list[int] = []
        for prefix in self._slots.values():
            tokens = prefix.tokens
            generated = len(prompt) >= prefix.prompt_length > 0
            if generated and len(tokens) > len(prompt) and _begins(prompt, tokens):
                following = tokens[len(prompt) : len(prompt) + limit]
                best = following if len(following) > len(best) else best
        return best

    def holds(self, prompt: Sequence[int]) -> bool:
        """Some resident prefix begins with all of `prompt` (touched: it stays resident)."""
        for prefix in self._slots.values():
            if _begins(prompt, prefix.tokens):
                self._touch(prefix)
                return True
        return False

    def record(self, seq: int, tokens: Sequence[int]) -> None:
        """The KV of `seq` now holds exactly `tokens`; then the budget is enforced and
        prefixes that another resident one holds in full are dropped."""
        prefix = self._slots[seq]
        prefix.tokens = list(tokens)
        self._touch(prefix)
        self._enforce_budget(keep=prefix)
        self._drop_redundant(prefix)

    def _drop_redundant(self, recorded: ResidentPrefix) -> None:
        """A prefix whose tokens all begin another resident prefix is never the best
        match, yet it takes a slot whose eviction costs another document its prompt: a
        request forked off a shared head and stopped before computing past it (a
        keystroke cancelled it, a real request preempted its warm) leaves just that."""
        for other in self._evictable():
            if other is recorded or other.seq not in self._slots:
                continue
            if _begins(other.tokens, recorded.tokens):
                self._evict(other)
            elif recorded.seq not in self._pinned and _begins(recorded.tokens, other.tokens):
                self._evict(recorded)
                return

    def borrow(self, count: int) -> list[int]:
        """Up to `count` empty sequences for a request's extra candidates: free ones, else
        the least recently used prefixes' (evicted); pinned until given back."""
        lent: list[int] = []
        for _ in range(count):
            if len(self._slots) >= self._n_slots and not self._evictable():
                break
            slot = self._free_slot(exclude=None)
            self._pinned.add(slot.seq)
            lent.append(slot.seq)
        return lent

    def give_back(self, seqs: Sequence[int]) -> None:
        """Sequences from borrow(), emptied and free again."""
        for seq in seqs:
            self._pinned.discard(seq)
            if seq in self._slots:
                self._evict(self._slots[seq])

    def pin(self, seq: int) -> None:
        self._pinned.add(seq)

    def unpin(self, seq: int) -> None:
        self._pinned.discard(seq)

    def clear(self) -> None:
        for prefix in list(self._slots.values()):
            self._evict(prefix)

    def _best_match(self, prompt: Sequence[int]) -> tuple[ResidentPrefix | None, int]:
        best: ResidentPrefix | None = None
        best_len = 0
        for prefix in self._slots.values():
            length = common_prefix_length(prefix.tokens, prompt)
            if length > best_len:
                best, best_len = prefix, length
        return best, best_len

    @staticmethod
    def _continue_in_place(prefix: ResidentPrefix, shared: int, request_length: int) -> bool:
        """In place when the request is a newer version of the last prompt placed there
        (the next keystroke in the same document; what was generated after the prompt is
        disposable): it discards at most a quarter of what it shares, and adds not much
        more than it discards. Otherwise the shared head is forked and the prompt stays
        resident: ghost text's continuation and the next-edit prompt share the first
        section; in place each would throw the other's tail away (the continuation ends
        a few tokens into the next-edit prompt's region, the next-edit prompt goes on
        for hundreds)."""
        prompt = min(len(prefix.tokens), prefix.prompt_length or len(prefix.tokens))
        discarded, added = prompt - shared, request_length - shared
        return discarded * 4 <= shared and added <= 4 * discarded + NEWER_VERSION_GROWTH

    def _trim(self, prefix: ResidentPrefix, length: int) -> None:
        if length < len(prefix.tokens):
            self._ops.seq_remove(prefix.seq, length, -1)
            del prefix.tokens[length:]

    def _free_slot(self, exclude: ResidentPrefix | None) -> ResidentPrefix:
        for seq in range(self._n_slots):
            if seq not in self._slots:
                self._slots[seq] = ResidentPrefix(seq=seq)
                return self._slots[seq]
        victims = [p for p in self._evictable() if p is not exclude]
        victim = min(victims, key=lambda p: p.last_used)
        self._evict(victim)
        self._slots[victim.seq] = ResidentPrefix(seq=victim.seq)
        return self._slots[victim.seq]

    def _touch(self, prefix: ResidentPrefix) -> None:
        self._clock += 1
        prefix.last_used = self._clock

    def _evict(self, prefix: ResidentPrefix) -> None:
        self._ops.seq_remove(prefix.seq, 0, -1)
        self._slots.pop(prefix.seq, None)

    def _evictable(self) -> list[ResidentPrefix]:
        return [p for p in self._slots.values() if p.seq not in self._pinned]

    def _others_by_age(self, keep: ResidentPrefix) -> list[ResidentPrefix]:
        others = [p for p in self._evictable() if p is not keep]
        return sorted(others, key=lambda p: p.last_used)

    def _make_room(self, target: ResidentPrefix, total_tokens: int) -> None:
        """Evict least recently used prefixes until the request fits in the cells."""
        others = self._others_by_age(target)
        while others and self.used_tokens() - len(target.tokens) + total_tokens > self._n_cells:
            self._evict(others.pop(0))

    def _enforce_budget(self, keep: ResidentPrefix) -> None:
        others = self._others_by_age(keep)
        while others and self.used_tokens() > self.capacity_tokens:
            self._evict(others.pop(0))
        if len(keep.tokens) > self.capacity_tokens:
            self._trim(keep, self.capacity_tokens)
