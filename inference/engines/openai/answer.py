"""One streamed answer of an OpenAI-compatible server in the engine interface's terms: the
text cut at the first stop string, why it ended ("eos" | "stop" | "length" | "unknown"),
and per token its log-probability and the text's length after it.

OpenAI's finish_reason "stop" means the model's end token *or* a stop string, and the next-
edit formats must tell them apart (a format complete on "eos" must not take an answer cut
by a stop string, and the other way round). So stop strings are matched here, on the text
as it streams (the caller closes the stream at a match: the server stops within a token),
and go to the server only once it has shown that it says which one it was (vLLM's
`stop_reason`, SGLang's `matched_stop`: the stop string, or null for the end token)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api import Completion, RequestStats
from ..text_output import Emit, TextAssembler

STOP_REPORT_KEYS = ("stop_reason", "matched_stop")  # where servers say which stop it was


@dataclass
class Answer:
    text: str = ""
    finish_reason: str = "unknown"
    logprobs: list[float] = field(default_factory=list)  # empty: the server gave none
    offsets: list[int] = field(default_factory=list)  # the text's length after each token
    usage: dict[str, Any] = field(default_factory=dict)
    first_token_at: float | None = None
    chunks: int = 0
    reports_stop: bool = False  # the server said which stop ended an answer


def finish_reason(server_reason: Any, stopped_by: Any, matched_here: bool) -> str:
    """Ours from the server's: its "stop" is a stop string only when it names one."""
    if matched_here:
        return "stop"
    if server_reason == "stop":
        return "stop" if isinstance(stopped_by, str) else "eos"
    if server_reason == "length":
        return "length"
    return "unknown"


class AnswerBuilder:
    """Feed it the stream's events (or pieces of text); `add` says when to stop reading.
    `min_token_p`: the answer ends before the first token less likely than it (finish
    "unsure"; the caller closes the stream, so the server stops decoding too)."""

    def __init__(
        self, stop: Sequence[str], emit: Emit | None = None, min_token_p: float = 0.0
    ) -> None:
        self._text = TextAssembler(stop, emit)
        self._min_logprob = math.log(min_token_p) if min_token_p > 0 else -math.inf
        self._unsure = False
        self._started = time.perf_counter()
        self._stop = tuple(s for s in stop if s)
        self._raw = ""  # the text received, before any stop cut
        self._server_reason: Any = None
        self._stopped_by: Any = None
        self._usable_logprobs = True
        self.answer = Answer()

    def add_event(self, event: dict[str, Any]) -> bool:
        """True once a stop string has appeared: read no further."""
        self._take_usage(event)
        choices = event.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            return False
        choice = choices[0]
        if any(key in choice for key in STOP_REPORT_KEYS):
            self.answer.reports_stop = True
            self._stopped_by = next((choice[k] for k in STOP_REPORT_KEYS if choice.get(k)), None)
        self._server_reason = choice.get("finish_reason") or self._server_reason
        return self.add_piece(str(choice.get("text") or ""), choice.get("logprobs"))

    def add_piece(self, piece: str, logprobs: Any) -> bool:
        if not piece and not logprobs:
            return self._text.stopped
        if piece and self.answer.first_token_at is None:
            self.answer.first_token_at = time.perf_counter() - self._started
        before = len(self._raw)
        self._raw += piece
        self.answer.chunks += bool(piece)
        kept = self._take_logprobs(logprobs, before, len(self._raw))
        if kept < len(self._raw):  # an unsure token: the answer ends before it
            self._raw = self._raw[:kept]
            self._unsure = True
            self._text.add(piece[: kept - before].encode())
            return True
        return self._text.add(piece.encode())

    def mark_length(self) -> None:
        """The answer ended at max_tokens without the server saying so (fed piece by piece)."""
        self._server_reason = "length"

    def finish(self) -> Answer:
        answer = self.answer
        answer.text = self._text.finish()
        answer.finish_reason = (
            "unsure"
            if self._unsure and not self._text.stopped
            else finish_reason(self._server_reason, self._stopped_by, self._text.stopped)
        )
        if not self._usable_logprobs or len(answer.logprobs) != len(answer.offsets):
            answer.logprobs, answer.offsets = [], []
        self._cut_tokens(len(answer.text))
        return answer

    def _take_usage(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("usage"), dict):
            self.answer.usage = event["usage"]
        for key in ("timings", "tokens_cached"):  # llama.cpp server's own figures
            if key in event:
                self.answer.usage.setdefault(key, event[key])

    def _take_logprobs(self, logprobs: Any, before: int, after: int) -> int:
        """The chunk's tokens end where their strings say, the last one where the chunk's
        text ends (a token string may be a partial character or spelled as bytes).
        Returns where the text kept ends: before the first unsure token, else `after`."""
        tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
        values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
        if not isinstance(tokens, list) or not isinstance(values, list) or not values:
            self._usable_logprobs = self._usable_logprobs and before == after
            return after
        if len(tokens) != len(values) or not all(isinstance(v, int | float) for v in values):
            self._usable_logprobs = False
            return after
        end = before
        for index, (token, value) in enumerate(zip(tokens, values, strict=True)):
            if self._usable_logprobs and float(value) < self._min_logprob:
                return end
            last = index == len(tokens) - 1
            end = after if last else min(after, end + len(str(token)))
            self.answer.logprobs.append(float(value))
            self.answer.offsets.append(end)
        return after

    def _cut_tokens(self, length: int) -> None:
        """After a stop cut here: keep the tokens up to the one that completed the stop
        string (as the local engines do), their offsets within the text."""
        answer = self.answer
        if self._text.stopped:
            matched = [s for s in self._stop if self._raw.startswith(s, length)]
            complete = length + min(map(len, matched), default=0)
            keep = next((i + 1 for i, end in enumerate(answer.offsets) if end >= complete), None)
            if keep is not None:
                del answer.logprobs[keep:], answer.offsets[keep:]
        answer.offsets = [min(end, length) for end in answer.offsets]


def as_completion(answers: list[Answer], stats: RequestStats) -> Completion:
    """Identical candidates are shown once (the first, best ranked, is kept)."""
    unique: dict[str, Answer] = {}
    for answer in answers:
        unique.setdefault(answer.text, answer)
    kept = list(unique.values())
    return Completion(
        [a.text for a in kept],
        stats,
        finish_reasons=[a.finish_reason for a in kept],
        logprobs=[a.logprobs for a in kept],
        text_offsets=[a.offsets for a in kept],
    )
