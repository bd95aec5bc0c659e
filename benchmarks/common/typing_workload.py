"""The typing workload of the KV-cache benchmarks: real code (the stdlib's textwrap module)
cut to ~1,500 tokens, lines typed into it at the start of a line about 70% down, and the
text after each keystroke (kv_reuse.py, vs_llama_server.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

from shadowtab.inference import LlamaCppEngine

FILE_TOKENS = 1500
TYPED = (
    "        if width <= 0:\n"
    '            raise ValueError(f"invalid width {width!r} (must be > 0)")\n'
    "        lines = [line.rstrip() for line in text.splitlines()]\n"
)


def source_file(engine: LlamaCppEngine) -> tuple[str, int]:
    """Real code (the stdlib's textwrap module) cut to ~FILE_TOKENS tokens, and the offset
    where typing happens (the start of a line about 70% into it)."""
    source = Path(textwrap.__file__).read_text()
    lines = source.splitlines(keepends=True)
    text = ""
    for line in lines:
        if len(engine.tokenize(text)) >= FILE_TOKENS:
            break
        text += line
    cut = text.rfind("\n", 0, int(len(text) * 0.7)) + 1
    return text, cut


def keystrokes(text: str, cut: int, typed: str) -> Iterator[tuple[str, int, str]]:
    """(text, cursor, typed so far) after each character typed at `cut`."""
    for count in range(1, len(typed) + 1):
        yield text[:cut] + typed[:count] + text[cut:], cut + count, typed[:count]
