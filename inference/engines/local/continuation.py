"""The model's own previous answer as the draft of a plain continuation. A keystroke that
types what the model had predicted (or one inside a word, whose healed prompt is the
previous keystroke's) asks for a prompt that the previous request's prompt and answer
begin: greedy decoding would write that answer's rest again. It is verified in the
prefill's last pass (decoding.prefill_with_head) instead of one pass per token; the
first token the model chooses otherwise ends the draft and greedy decoding goes on from
it, so the output is greedy's (up to a near tie that a batched pass decides otherwise)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..api import RequestStats
from .decoding import Logits, SequenceWriter, TokenSink, gap_of, greedy, log_prob


def drafted_greedy(
    writer: SequenceWriter,
    first: Logits,
    draft: Sequence[int],
    rows: Logits | None,
    sink: TokenSink,
    stats: RequestStats,
) -> None:
    """Greedy decoding after the prompt (`first`: the logits after its last token) whose
    first tokens are checked against `draft`. `rows`: the logits after each draft token,
    computed by the prefill's last pass (whose KV holds them), or None when it could
    not carry the draft (then it is plain greedy)."""
    if rows is None or not draft:
        greedy(writer, first, sink)
        return
    base = len(writer.tokens) - len(draft)  # where the draft's KV begins
    row = sink.constrain(first)
    accepted = 0
    for drafted in draft:
        token = int(np.argmax(row))
        if token != drafted:  # the model leaves the draft here: the rest is not its answer
            break
        if sink.push(token, gap_of(row, token), log_prob(row, token)):
            writer.truncate(base + accepted + 1)  # the draft's rest is not this answer's
            _account(stats, draft, accepted + 1)
            return
        row = sink.constrain(rows[accepted])
        accepted += 1
    writer.truncate(base + accepted)
    _account(stats, draft, accepted)
    token = int(np.argmax(row))
    if not sink.push(token, gap_of(row, token), log_prob(row, token)):
        greedy(writer, writer.eval([token], [0])[0], sink)


def _account(stats: RequestStats, draft: Sequence[int], accepted: int) -> None:
    stats.draft_tokens += len(draft)
    stats.accepted_draft_tokens += accepted
