"""The built-in python-syntax linter: compile() in a child process.

compile() holds the GIL for its whole run (seconds on a file of a few MB), so in the
daemon's process it would stall the event loop whichever thread ran it; a child also
lets a newer text kill the run it supersedes, as with any other linter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .line_text import LineIndex, utf16_len
from .model import Diagnostic, Position, Range

# Reads the text (UTF-8) on stdin, prints the SyntaxError as JSON, or null.
CHILD_PROGRAM = """\
import json, sys
text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
try:
    compile(text, sys.argv[1], "exec", dont_inherit=True)
except SyntaxError as exc:
    found = {"msg": exc.msg, "line": exc.lineno, "offset": exc.offset,
             "end_line": exc.end_lineno, "end_offset": exc.end_offset}
except ValueError as exc:
    found = {"msg": str(exc)}
else:
    found = None
sys.stdout.write(json.dumps(found))
"""


def child_command(path: Path) -> list[str]:
    """This Python, isolated (-I: no user site, no PYTHON* variables), no site (-S)."""
    return [sys.executable, "-I", "-S", "-c", CHILD_PROGRAM, str(path)]


def char_position(lines: LineIndex, row: int, column: int) -> Position:
    """1-based row and code-point column to an LSP position."""
    line, content = lines.line(row - 1)
    return Position(line, utf16_len(content[: max(0, column - 1)]))


def parse_syntax_answer(output: str, text: str, source: str) -> list[Diagnostic]:
    """The child's JSON answer as diagnostics (ValueError when it is not one)."""
    found = json.loads(output)
    if found is None:
        return []
    if not isinstance(found, dict) or not isinstance(found.get("msg"), str):
        raise ValueError(f"unexpected answer {output[:80]!r}")
    if found.get("line") is None:  # ValueError: NUL characters
        return [Diagnostic(Range.of(0, 0, 0, 0), found["msg"], 1, source)]
    lines = LineIndex(text)
    row, column = found["line"] or 1, found.get("offset") or 1
    start = char_position(lines, row, column)
    end_row = found.get("end_line") or row
    end_column = found.get("end_offset") or column
    end = max(start, char_position(lines, end_row, end_column))
    return [Diagnostic(Range(start, end), found["msg"], 1, source)]
