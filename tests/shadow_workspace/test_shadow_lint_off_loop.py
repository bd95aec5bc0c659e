"""Linting a big document leaves the event loop free (the text is snapshotted, joined in
a thread, compile() runs in a child process, the output is read in a thread), and a
document over the size limit is not linted at all, which the report says."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from shadow_helpers import uri_of
from shadowtab.shadow_workspace import LinterSpec, Range, ShadowWorkspace, TextChange
from shadowtab.shadow_workspace.line_text import LineIndex, LineText, line_content
from shadowtab.shadow_workspace.linting import DEFAULT_LINTERS

FUNCTION = "def function_{i}(value: int) -> int:\n    return value + {i}\n\n\n"


def big_source(megabytes: float) -> str:
    """Valid Python of about `megabytes`: compile() takes about a second per MB here."""
    one = len(FUNCTION.format(i=100_000))
    count = int(megabytes * 2**20 / one)
    return "".join(FUNCTION.format(i=i) for i in range(count))


async def largest_gap_while(work: asyncio.Task[object]) -> tuple[float, float]:
    """(the longest the loop took to come back to a 5 ms ticker, the work's duration)."""
    started = last = time.perf_counter()
    gap = 0.0
    while not work.done():
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
    return gap, time.perf_counter() - started


async def test_the_event_loop_keeps_answering_while_a_big_file_is_linted(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    workspace = ShadowWorkspace(root, None, watch=False, lint_max_mb=8)
    try:
        path = root / "big.py"
        text = big_source(2.0)
        path.write_text(text)
        uri = uri_of(path)
        document = workspace.open_document(uri, text, 1, "python")
        # A keystroke: the text is held as lines again, to be joined for the lint.
        end = document.position_at(document.length)
        change = TextChange(Range(end, end), "broken = (\n")
        workspace.change_document(uri, 2, [change])
        lint = asyncio.ensure_future(workspace.lint_report(uri))
        gap, duration = await largest_gap_while(lint)
        report = lint.result()
    finally:
        workspace.close()
    assert not report.degraded, report.failures
    syntax = [d for d in report.diagnostics if d.source == "python-syntax"]
    assert syntax and syntax[0].range.start.line >= end.line  # at the end of 2 MB
    # compile() of 2 MB holds the GIL for most of the lint: run in a thread of this
    # process it stalls the loop for about the lint's whole duration.
    assert gap < duration / 3, f"the loop stalled {gap:.3f} s of a {duration:.3f} s lint"


async def test_a_document_over_the_limit_is_not_linted(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    # A linter that reports "ran" whenever it runs.
    command = ["sh", "-c", "cat >/dev/null; echo x.py:1: error: ran"]
    says_ran = LinterSpec(command, "lines", extensions=(".py",), name="says-ran")
    workspace = ShadowWorkspace(root, None, {"says-ran": says_ran}, watch=False)
    workspace.lint_max_chars = 1000
    try:
        small, big = root / "small.py", root / "big.py"
        for path, size in ((small, 10), (big, 2000)):
            path.write_text("x" * size)
            workspace.open_document(uri_of(path), "x" * size, 1, "python")
        ran = await workspace.lint_report(uri_of(small))
        skipped = await workspace.lint_report(uri_of(big))
        assert [d.message for d in ran.diagnostics] == ["ran"] and ran.skipped is None
        assert not skipped.failures and not skipped.diagnostics  # it did not run
        assert skipped.skipped is not None and "lint_mb" in skipped.skipped
        assert list(workspace.lint_skipped) == [uri_of(big)]
        assert skipped.to_dict()["skipped"] == skipped.skipped
        workspace.close_document(uri_of(big))
        assert not workspace.lint_skipped  # forgotten with the document
    finally:
        workspace.close()


async def test_scratch_texts_over_the_limit_are_not_linted(tmp_path: Path) -> None:
    workspace = ShadowWorkspace(tmp_path, None, DEFAULT_LINTERS, watch=False, lint_max_mb=0.001)
    try:
        report = await workspace.lint_text_report(tmp_path / "a.py", "x = (\n" * 500, "python")
    finally:
        workspace.close()
    assert report.skipped is not None and not report.diagnostics


def test_line_index_agrees_with_line_text() -> None:
    text = "a\r\nb\rc\n\né😀\r\n\rlast"
    lines, index = LineText(text), LineIndex(text)
    for row in (5, 0, 3, 1, 2, 4, 6):
        assert index.line(row) == (row, line_content(lines.line(row)))
    assert index.line(99) == (6, "last")  # clamped to the last line, as LineText
    assert LineIndex("a\n").line(1) == (1, "")
