"""Decoding on one KV sequence through the low-level runtime: the writer that evaluates
tokens into a sequence and knows what its KV holds, prefill, the sink that collects the
generated tokens and says when generation is over, and plain greedy decoding (the
reference output). Logits only where needed, argmax in numpy, a guard before every
forward pass (cancel, preemption). Speculative decoding (speculative.py) builds on these."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..text_output import TextAssembler
from .healing import Healing
from .pass_plan import padded_rows, pass_sizes
from .runtime import Runtime

Guard = Callable[[], None]  # raises to stop before the next forward pass
Logits = npt.NDArray[np.float32]


class SequenceWriter:
    """Evaluates tokens into one sequence and always knows exactly what its KV holds."""

    def __init__(self, runtime: Runtime, seq: int, cached: Sequence[int], guard: Guard) -> None:
        self.runtime = runtime
        self.seq = seq
        self.tokens = list(cached)
        self.guard = guard
        self.passes = 0

    def eval(self, tokens: Sequence[int], outputs: Sequence[int], rows: int = 0) -> Logits:
        """`rows`: compute a pass this long, the tokens padded with throwaway ones whose
        cells are removed after it (pass_plan.py); they come after every output."""
        self.guard()
        pos = len(self.tokens)
        padding = [tokens[-1]] * max(rows - len(tokens), 0)
        logits = self.runtime.decode([*tokens, *padding], self.seq, pos, outputs)
        if padding:
            self.runtime.seq_remove(self.seq, pos + len(tokens), -1)
        self.tokens.extend(tokens)
        self.passes += 1
        return logits

    def truncate(self, length: int) -> None:
        if length < len(self.tokens):
            self.runtime.seq_remove(self.seq, length, -1)
            del self.tokens[length:]


def prefill_only(writer: SequenceWriter, prompt: Sequence[int], chunk: int) -> None:
    """Evaluate the prompt's uncached tail in passes of `chunk` at most, without logits
    (warming)."""
    tile = writer.runtime.pass_tile
    begin = len(writer.tokens)
    for size in pass_sizes(len(prompt) - begin, chunk, tile):
        writer.eval(prompt[begin : begin + size], [], padded_rows(size, tile))
        begin += size


def prefill(writer: SequenceWriter, prompt: Sequence[int], chunk: int) -> Logits:
    """Evaluate the prompt's uncached tail in chunks; the last token's logits (a copy)."""
    return prefill_with_head(writer, prompt, (), chunk)[0]


def prefill_with_head(
    writer: SequenceWriter,
    prompt: Sequence[int],
    head: Sequence[int],
    chunk: int,
    only_free: bool = False,
) -> Logits:
    """Evaluate the prompt's uncached tail, then `head` (tokens the answer is expected to
    begin with: a rewrite's first draft tokens), in chunks; the logits (copies) after the
    prompt's last token and after each head token. The head rides in the prefill's last
    pass, so verifying it costs no pass of its own (speculative.py's `head`); where it
    does not fit in that pass it is left out (one row: the prompt's), so a pass is never
    longer than `chunk` nor the head split over two. `only_free`: only where the pass
    computes its rows anyway (padded to the tile: pass_plan.py)."""
    wanted = len(prompt) - 1  # the first position whose logits are returned
    begin = len(writer.tokens)
    if begin > wanted:
        raise ValueError("prefill needs at least one uncached prompt token")
    tile = writer.runtime.pass_tile
    sizes = pass_sizes(len(prompt) - begin, chunk, tile)
    sequence = list(prompt)
    room = min(padded_rows(sizes[-1], tile), chunk) if only_free else chunk
    if sizes[-1] + len(head) <= room:
        sequence += head
        sizes[-1] += len(head)
    found: list[Logits] = []
    for size in sizes:
        part = sequence[begin : begin + size]
        outputs = list(range(max(wanted - begin, 0), len(part)))
        rows = writer.eval(part, outputs, padded_rows(size, tile))
        found.extend(row.copy() for row in rows[: len(outputs)])
        begin += size
    return np.stack(found)


def log_prob(row: Logits, token: int) -> float:
    """log softmax(row)[token], computed stably."""
    peak = float(row.max())
    return float(row[token]) - peak - float(np.log(np.exp(row - peak).sum()))


def gap_of(row: Logits, token: int) -> float:
    """The token's logit minus the best other one's (negative for a token that was not
    the model's first choice, such as an alternative's forced first token)."""
    other = max(row[:token].max(initial=-np.inf), row[token + 1 :].max(initial=-np.inf))
    return float(row[token] - other)


def top2_gaps(rows: Logits, choices: npt.NDArray[np.int64]) -> list[float]:
    """Per row, its top logit minus the runner-up (two max reductions, no sort)."""
    gaps = []
    for row, choice in zip(rows, choices, strict=True):
        c = int(choice)
        second = max(row[:c].max(initial=-np.inf), row[c + 1 :].max(initial=-np.inf))
        gaps.append(float(row[c] - second))
    return gaps


@dataclass
class Generation:
    tokens: list[int] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)  # logit gap to the runner-up
    logprobs: list[float] = field(default_factory=list)  # of each kept token
    offsets: list[int] = field(default_factory=list)  # the text's length after each token
    # "eos", "stop" (a stop string), "length", "abandoned", "unsure" (stopped before a
    # token less likely than the request's min_token_p)
    finish: str = "unknown"
    text: str = ""
    first_token_at: float | None = None


class TokenSink:
    """Collects generated tokens; says when generation is over (end token, limit, stop)."""

    def __init__(
        self,
        runtime: Runtime,
        max_tokens: int,
        text: TextAssembler,
        clock: Callable[[], float],
        min_token_p: float = 0.0,
        healing: Healing | None = None,
    ) -> None:
        """`healing`: the removed end of the prompt the first tokens re-write (healing.py);
        those bytes are not the text, and the rows those tokens are chosen from are
        constrained (`constrain`)."""
        self.runtime = runtime
        self.max_tokens = max_tokens
        self.text = text
        self.clock = clock
        self.result = Generation()
        self.done = False
        # below it a token is unsure: generation stops before it (finish "unsure")
        self.min_logprob = math.log(min_token_p) if min_token_p > 0 else -math.inf
        self.healing = healing

    def constrain(self, row: Logits) -> Logits:
        """The logits the next token is chosen from: while healing re-writes the prompt's
        removed end, only tokens that do so (renormalized: see Healing.constrain)."""
        return self.healing.constrain(row) if self.healing is not None else row

    def push(
        self,
        token: int,
        margin: float | None = None,
        logprob: float | None = None,
        judged: bool = True,
    ) -> bool:
        """Add one token; True when generation must stop (the token may not be kept).
        `margin`: its logit gap to the runner-up; `logprob`: its log-probability;
        `judged`: held against the minimum probability (a rewrite's copies of its draft
        are not)."""
        if self.done:
            return True
        if self.result.first_token_at is None:
            self.result.first_token_at = self.clock()
        if judged and logprob is not None and logprob < self.min_logprob:
            self.done = True
            self.result.finish = "unsure"
            return True
        if self.runtime.is_end_of_generation(token):
            self.done = True
            self.result.finish = "eos"
            return True
        self.result.tokens.append(token)
        if margin is not None:
            self.result.margins.append(margin)
        if logprob is not None:
            self.result.logprobs.append(logprob)
        piece = self.runtime.piece(token)
        if self.healing is not None:
            piece = self.healing.written(piece)
        stopped = self.text.add(piece)
        self.result.offsets.append(len(self.text.text))
        if stopped:
            self.result.finish = "stop"
        elif len(self.result.tokens) >= self.max_tokens:
            self.result.finish = "length"
        self.done = stopped or len(self.result.tokens) >= self.max_tokens
        return self.done


def greedy(writer: SequenceWriter, first: Logits, sink: TokenSink) -> None:
    """Plain greedy decoding, one token per forward pass: the reference output (the
    sink's healing constrains the first tokens)."""
    row = sink.constrain(first)
    while True:
        token = int(np.argmax(row))
        if sink.push(token, gap_of(row, token), log_prob(row, token)):
            return
        row = sink.constrain(writer.eval([token], [0])[0])
