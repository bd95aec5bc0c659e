"""While the user types an edit, the region's lines above the edit are given to the model
as the start of its answer instead of being rewritten by it.

A region starts a few lines above the edit (formats/shadowtab.py: REGION_LINES_ABOVE),
and a rewrite begins by copying them. Given in the prompt after the answer's marker,
they are one prefill pass instead of verification passes, and no alternative can branch
inside them; under greedy decoding the answer is the same whenever the model would have
copied them. It can no longer change them, which while an edit is being typed below
them is what the user wants. It saves decoded passes, but the given lines follow the
typing, which changes every keystroke, so warming cannot prefill them.

The cut is made before the newline that ends the last given line, not after it: byte
BPE tokenizers write a newline together with the next line's indentation, so a prompt
ending in a bare newline would force a split the model never saw in training. Only for
formats whose draft starts with the region itself, line for line (escaped).
"""

from __future__ import annotations

from ..formats.base import unescape
from ..situation import RenderedPrompt, Situation
from ..text_spans import line_starts


def with_lines_given(rendered: RenderedPrompt, situation: Situation) -> RenderedPrompt:
    """`rendered` with the region's lines above the edit in progress moved from the draft
    into the prompt (the region then starts at the newline before the edit's line), or
    `rendered` itself when nothing can be given faithfully."""
    edit = situation.in_progress
    if edit is None:
        return rendered
    text = situation.text
    anchor = min(edit.start, situation.cursor)
    cut = text.rfind("\n", rendered.region_start, anchor)  # ends the last given line
    while cut > rendered.region_start and text[cut - 1].isspace():  # blank line, trailing space
        cut = text.rfind("\n", rendered.region_start, cut)
    if cut <= rendered.region_start:
        return rendered
    lines = text.count("\n", rendered.region_start, cut)  # given lines before that one
    draft_starts = line_starts(rendered.draft)
    if len(draft_starts) <= lines + 1:
        return rendered
    draft_cut = draft_starts[lines + 1] - 1  # the draft's newline that ends the given lines
    given = rendered.draft[:draft_cut]
    if unescape(given) != text[rendered.region_start : cut]:
        return rendered
    return RenderedPrompt(
        rendered.prompt + given, rendered.draft[draft_cut:], cut, rendered.region_end
    )
