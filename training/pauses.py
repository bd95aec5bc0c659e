"""Where a person typing an edit pauses: the cut point of a half-typed change.

As Zed's `imitate_human_edits` does, a cut right after punctuation that opens or
separates something (`,;:([{`) is ten times likelier than one inside an identifier;
after whitespace or other punctuation it is in between. Training's situations and the
evaluation's cases (training/eval_cases.py) cut with these weights.
"""

from __future__ import annotations

import random

PAUSE_AFTER = frozenset(",;:([{")
WEIGHT_PAUSE = 10.0
WEIGHT_SPACE = 3.0
WEIGHT_OTHER = 2.0
WEIGHT_MID_WORD = 1.0


def _weight(previous: str, following: str) -> float:
    if previous in PAUSE_AFTER:
        return WEIGHT_PAUSE
    if previous.isspace():
        return WEIGHT_SPACE
    if (previous.isalnum() or previous == "_") and (following.isalnum() or following == "_"):
        return WEIGHT_MID_WORD
    return WEIGHT_OTHER


def cut_weight(new_text: str, cut: int) -> float:
    """How likely a person typing `new_text` pauses after its first `cut` characters
    (0 <= cut < len(new_text))."""
    if cut == 0:
        return WEIGHT_SPACE  # having deleted the old text and typed nothing yet is a pause too
    return _weight(new_text[cut - 1], new_text[cut])


def pick_cut(new_text: str, rng: random.Random) -> int:
    """How many characters of `new_text` are typed: 0 <= cut < len(new_text), so
    something is always left to predict."""
    if len(new_text) <= 1:
        return 0
    cuts = range(len(new_text))
    return rng.choices(cuts, weights=[cut_weight(new_text, cut) for cut in cuts])[0]
