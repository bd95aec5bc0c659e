"""Line-completion (ghost text) examples: the prompt ghost text's plain continuation
sends, the rest of the line as the answer.

The product's continuation prompt for the packaged adapter's format is
`formats.shadowtab.continuation_prompt(situation)` (`Format.continuation`): the
next-edit prompt's first section, then the region's text up to the cursor, escaped. It
holds nothing after the cursor: the engine continues it with stop `"\\n"`, and
`rejoin.py` cuts the continuation where it writes the rest of the line again. So the
answer is the whole rest of the finished line (the part already after the cursor too)
and its newline, escaped as the model writes it, with no EOS: the stop string ends it.
"""

from __future__ import annotations

import random

from shadowtab.inference.next_edit.formats.shadowtab import continuation_prompt, escape

from training.commits import Commit
from training.situations import Example, HalfTyped, half_typed


def rest_of_line(text: str, at: int) -> str | None:
    """text[at:] to the end of its line, newline included; None on the last line
    (no newline: the engine would stop on its token limit, not where we train it to)."""
    end = text.find("\n", at)
    return None if end < 0 else text[at : end + 1]


def line_completion(commit: Commit, k: int, rng: random.Random) -> Example | None:
    """Hunk k typed up to a pause (pauses.py), as in a `typing` situation; the answer
    finishes the cursor's line as the commit did."""
    state = half_typed(commit, k, None, rng)
    return None if state is None else line_example(state)


def line_example(state: HalfTyped) -> Example | None:
    """The continuation prompt of a half-typed situation, its line's rest the answer."""
    prompt = continuation_prompt(state.situation)
    if prompt is None:
        return None
    rest = rest_of_line(state.finished, state.situation.cursor)
    if rest is None or not rest.strip():
        return None  # nothing to write on this line: not a completion
    return Example("line", prompt, escape(rest), draft="", eos=False)
