"""The `shadowtab` prompt format: the layout our own next-edit adapter is trained on.

Sections, most stable first, so that consecutive keystrokes reuse the KV cache (only
the tail of the in-progress diff changes while the user types one edit):

    [<filename>OTHER PATH\nSNIPPET\n ...]        (the project's code, when chosen;
                                                   fixed while typing in one place)
    <filename>PATH\n
    CONTEXT ABOVE THE REGION                    (fixed while the region stays put)
    <issue_start>PAST EDITS                     (changes when an edit completes)
    <jupyter_start>REGION BEFORE THE EDIT       (the region as it was before the edit
    <jupyter_text>CONTEXT BELOW THE REGION       being typed; fixed while typing it)
    <issue_comment>THE EDIT BEING TYPED         (whole lines, `-` old / `+` now)
    <jupyter_code>                              -> the model writes the updated region,
                                                   then its end-of-sequence token

The markers are SmolLM2's control tokens: single tokens that user text cannot forge,
because user text is escaped (ESCAPE after the `<` of any control string) and the
model's answer is unescaped. The region is anchored to the edit being typed, not to
the cursor, so pressing Enter inside the edit does not move it.

This module is pure: plain strings and offsets in, a prompt out. The training code in
`training/` renders its examples with the same function, so the adapter sees exactly
what the predictor sends.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..situation import EditInProgress, PastEdit, RenderedPrompt, Situation, Snippet
from ..text_spans import line_of, line_starts

__all__ = [
    "EditInProgress",
    "PastEdit",
    "RenderedPrompt",
    "Situation",
    "Snippet",
    "continuation_prompt",
    "parse_answer",
    "render",
]

NAME = "shadowtab"

FILE = "<filename>"
PAST = "<issue_start>"
REGION = "<jupyter_start>"
BELOW = "<jupyter_text>"
TYPING = "<issue_comment>"
ANSWER = "<jupyter_code>"
# Every control string of SmolLM2's vocabulary (ids 0-16): none may appear unescaped.
CONTROL_STRINGS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<repo_name>",
    "<reponame>",
    "<file_sep>",
    "<filename>",
    "<gh_stars>",
    "<issue_start>",
    "<issue_comment>",
    "<issue_closed>",
    "<jupyter_start>",
    "<jupyter_text>",
    "<jupyter_code>",
    "<jupyter_output>",
    "<jupyter_script>",
    "<empty_output>",
)
ESCAPE = "\u2063"  # INVISIBLE SEPARATOR, put after the `<` of a control string

CONTEXT_LINES_ABOVE = 24
REGION_LINES_ABOVE = 3  # region lines above the first line of the edit (or cursor)
REGION_LINES_BELOW = 6  # region lines below its last line
CONTEXT_LINES_BELOW = 6
MAX_EDIT_LINES = 24  # a longer edit in progress is shown as a past edit instead
MAX_PAST_EDITS = 6
MAX_PAST_EDITS_CHARS = 1600  # about 400 tokens; the oldest are dropped first
PAST_EDIT_CONTEXT_LINES = 1


def escape(text: str) -> str:
    """User text with every control string broken by ESCAPE (see `unescape`)."""
    if "<" not in text:
        return text
    for control in CONTROL_STRINGS:
        text = text.replace(control, control[0] + ESCAPE + control[1:])
    return text


def unescape(text: str) -> str:
    return text.replace("<" + ESCAPE, "<")


def _lines_span(text: str, starts: list[int], first: int, last: int) -> tuple[int, int]:
    """Offsets of lines first..last inclusive, the last line's newline included."""
    first = max(0, first)
    last = min(len(starts) - 1, last)
    end = starts[last + 1] if last + 1 < len(starts) else len(text)
    return starts[first], end


def render_past_edits(edits: Sequence[PastEdit]) -> str:
    """Each edit as `PATH` + a unified diff with one line of context, newest last,
    the oldest dropped to stay inside MAX_PAST_EDITS_CHARS."""
    blocks: list[str] = []
    for edit in list(edits)[-MAX_PAST_EDITS:]:
        diff = difflib.unified_diff(
            edit.before.splitlines(keepends=True),
            edit.after.splitlines(keepends=True),
            n=PAST_EDIT_CONTEXT_LINES,
            lineterm="",
        )
        lines = [line if line.endswith("\n") else line + "\n" for line in list(diff)[2:]]
        if lines:
            blocks.append(f"{edit.path}\n{''.join(lines)}")
    while blocks and sum(map(len, blocks)) > MAX_PAST_EDITS_CHARS:
        blocks.pop(0)
    return "".join(blocks)


def _typing_diff(old_lines: str, new_lines: str) -> str:
    minus = "".join(f"-{line}\n" for line in old_lines.splitlines()) if old_lines else ""
    plus = "".join(f"+{line}\n" for line in new_lines.splitlines()) if new_lines else ""
    return minus + plus


def _edit_lines(situation: Situation, starts: list[int]) -> tuple[int, int, EditInProgress | None]:
    """The first and last line of the edit being typed (or the cursor's line), and the
    edit when it can be shown."""
    text = situation.text
    edit = situation.in_progress
    if edit is not None and not _usable(text, edit):
        edit = None
    if edit is None:
        first = last = line_of(starts, min(max(situation.cursor, 0), len(text)))
        return first, last, None
    return line_of(starts, edit.start), line_of(starts, edit.start + len(edit.new_text)), edit


def render_snippets(snippets: Sequence[Snippet]) -> str:
    """The project's code as files before the file being edited, in the layout the base
    model saw in pre-training (each file after its `<filename>` marker); a snippet that
    holds the escape character itself is left out."""
    return "".join(
        f"{FILE}{escape(s.path)}\n{escape(s.text).rstrip(chr(10))}\n"
        for s in snippets
        if ESCAPE not in s.text and ESCAPE not in s.path
    )


def _head(situation: Situation, starts: list[int], first: int) -> tuple[str, int]:
    """The prompt's first section (the project's snippets, the file marker, the context
    above the region) and where the region starts."""
    region_start = starts[max(0, first - REGION_LINES_ABOVE)]
    context_start = starts[max(0, first - REGION_LINES_ABOVE - CONTEXT_LINES_ABOVE)]
    head = (
        render_snippets(situation.context)
        + f"{FILE}{escape(situation.path)}\n"
        + escape(situation.text[context_start:region_start])
    )
    return head, region_start


def continuation_prompt(situation: Situation) -> str | None:
    """Plain code up to the cursor, for ghost text's fallback continuation: `render`'s
    first section, then the region's text up to the cursor. The two prompts begin
    alike, so the continuation finds that section in the KV cache (the next-edit
    prompt's, warmed) and prefills only the region's lines up to the cursor. None when
    the cursor lies above the region or the text holds the escape character."""
    text, cursor = situation.text, situation.cursor
    if ESCAPE in text or not 0 <= cursor <= len(text):
        return None
    starts = line_starts(text)
    first, _, _ = _edit_lines(situation, starts)
    head, region_start = _head(situation, starts, first)
    if cursor < region_start:
        return None
    return head + escape(text[region_start:cursor])


def render(situation: Situation) -> RenderedPrompt | None:
    """The prompt for `situation`, or None when it cannot be rendered faithfully (the
    text holds the escape character itself)."""
    text = situation.text
    if ESCAPE in text:
        return None
    starts = line_starts(text)
    first, last, edit = _edit_lines(situation, starts)
    old_lines = new_lines = ""
    if edit is not None:
        edit_start, edit_end = _lines_span(text, starts, first, last)
        new_lines = text[edit_start:edit_end]
        old_lines = (
            text[edit_start : edit.start]
            + edit.old_text
            + text[edit.start + len(edit.new_text) : edit_end]
        )
    region_start, region_end = _lines_span(
        text, starts, first - REGION_LINES_ABOVE, last + REGION_LINES_BELOW
    )
    head, _ = _head(situation, starts, first)
    below_end = _lines_span(text, starts, 0, last + REGION_LINES_BELOW + CONTEXT_LINES_BELOW)[1]
    region_now = text[region_start:region_end]
    region_before = region_now
    if edit is not None:
        cut = edit.start - region_start
        region_before = region_now[:cut] + edit.old_text + region_now[cut + len(edit.new_text) :]
    prompt = "".join(
        (
            head,
            PAST,
            escape(render_past_edits(situation.past_edits)),
            REGION,
            escape(region_before),
            BELOW,
            escape(text[region_end:below_end]),
            TYPING,
            escape(_typing_diff(old_lines, new_lines)),
            ANSWER,
        )
    )
    return RenderedPrompt(prompt, escape(region_now), region_start, region_end)


def _usable(text: str, edit: EditInProgress) -> bool:
    """The edit lies in the text as described and spans few enough lines to be shown."""
    end = edit.start + len(edit.new_text)
    if edit.start < 0 or end > len(text) or text[edit.start : end] != edit.new_text:
        return False
    lines = max(edit.old_text.count("\n"), edit.new_text.count("\n")) + 1
    return lines <= MAX_EDIT_LINES


def parse_answer(answer: str) -> str | None:
    """The updated region from the model's answer (the text it wrote before its
    end-of-sequence token), or None when the answer is not a clean region: a stray
    marker or escape, or no end. Callers pass only answers that ended on the model's
    end-of-sequence token; a cut-off answer is no answer."""
    if any(control in answer for control in CONTROL_STRINGS):
        return None
    return unescape(answer)
