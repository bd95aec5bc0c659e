"""Next-edit prompts in the adapter's own (`shadowtab`) format, for the tests that run
the packaged adapter on each engine: one where the user is typing an edit, one where
nothing needs to change (the adapter should copy the window)."""

from __future__ import annotations

import difflib

from shadowtab.inference.next_edit.formats import get_format, stop_strings
from shadowtab.inference.next_edit.situation import EditInProgress, RenderedPrompt, Situation

OLD = (
    "def area(width, height):\n    return width * height\n\n\n"
    "def perimeter(width, height):\n    return 2 * (width + height)\n\n\n"
    "print(area(2, 3), perimeter(2, 3))\n"
)
TYPED = "def area(w"
TEXT = OLD.replace("def area(width", TYPED, 1)
COPY_TEXT = (
    "import json\nfrom pathlib import Path\n\n\n"
    "def load(path: Path) -> dict:\n    with path.open() as handle:\n"
    "        return json.load(handle)\n\n\n"
    "def save(path: Path, data: dict) -> None:\n    path.write_text(json.dumps(data))\n"
)


def typing_prompt() -> tuple[RenderedPrompt, tuple[str, ...]]:
    """The user renames `width` in area()'s signature, half typed."""
    situation = Situation("shapes.py", TEXT, len(TYPED), EditInProgress(0, "def area(width", TYPED))
    return _render(situation)


def copy_prompt() -> tuple[RenderedPrompt, tuple[str, ...]]:
    """No edit in progress: the right answer is the window as it is."""
    return _render(Situation("store.py", COPY_TEXT, COPY_TEXT.index("def save")))


def _render(situation: Situation) -> tuple[RenderedPrompt, tuple[str, ...]]:
    fmt = get_format("shadowtab")
    rendered = fmt.render(situation)
    assert rendered is not None
    return rendered, stop_strings(fmt, rendered)


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
