"""Linting of unsaved text with the real ruff and compile(); linters that are missing,
hang, crash or print garbage give degraded reports; debounced per document;
diagnostics_delta with line shifts."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from shadow_helpers import uri_of
from shadowtab.shadow_workspace import (
    Diagnostic,
    LinterSpec,
    Range,
    ShadowWorkspace,
    TextChange,
    diagnostics_delta,
)
from shadowtab.shadow_workspace.linting import DEFAULT_LINTERS, lint_text, resolve_command


async def test_ruff_lints_the_shadow_not_the_disk(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    uri = uri_of(path)
    workspace.open_document(uri, "x = 1\n", 1, "python")
    workspace.change_document(
        uri, 2, [TextChange(Range.of(1, 0, 1, 0), 's = "😀"; y = undefined\n')]
    )
    report = await workspace.lint_report(uri)
    assert not report.degraded, report.failures
    [found] = [d for d in report.diagnostics if d.code == "F821"]
    assert found.range == Range.of(1, 14, 1, 23)  # UTF-16: the emoji counts two
    assert found.source == "ruff" and "undefined" in found.message


async def test_syntax_error_reported_once(workspace: ShadowWorkspace, root: Path) -> None:
    diagnostics = await workspace.lint_text(root / "b.py", "def f(:\n    pass\n", "python")
    syntax = [d for d in diagnostics if d.severity == 1]
    assert len(syntax) == 1 and syntax[0].range.start.line == 0
    assert syntax[0].source == "python-syntax"


async def test_missing_hanging_crashing_linters_degrade(tmp_path: Path) -> None:
    linters = {
        "missing": LinterSpec(
            ["no-such-linter-xyz", "{path}"], "lines", extensions=(".py",), name="missing"
        ),
        "hang": LinterSpec(
            ["sleep", "30"], "lines", extensions=(".py",), name="hang", timeout_s=0.5
        ),
        "crash": LinterSpec(
            [sys.executable, "-c", "import sys; print('not json'); sys.exit(3)"],
            "ruff-json",
            extensions=(".py",),
            name="crash",
        ),
        "syntax": DEFAULT_LINTERS["python-syntax"],
    }
    started = time.monotonic()
    report = await lint_text(linters, tmp_path / "a.py", "x = (\n", "python")
    assert time.monotonic() - started < 5
    assert set(report.failures) == {"missing", "hang", "crash"}
    assert "not installed" in report.failures["missing"]
    assert "timed out" in report.failures["hang"]
    assert "exit 3" in report.failures["crash"]
    assert [d.source for d in report.diagnostics] == ["python-syntax"]  # the rest still works


async def test_lines_format_linter(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "for i, l in enumerate(sys.stdin):\n"
        "    if 'TODO' in l: print(f'{sys.argv[1]}:{i+1}:3: warning: todo left')\n"
    )
    spec = LinterSpec(
        [sys.executable, "-c", script, "{path}"], "lines", extensions=(".txt",), name="todo"
    )
    report = await lint_text({"todo": spec}, tmp_path / "n.txt", "ok\n  TODO x\n", None)
    assert report.diagnostics == [Diagnostic(Range.of(1, 2, 1, 8), "todo left", 2, "todo", None)]


def test_delta_with_line_shift() -> None:
    old = Diagnostic(Range.of(5, 0, 5, 3), "Undefined name `q`", 2, "ruff", "F821")
    inserted_two_lines = TextChange(Range.of(1, 0, 1, 0), "a = 1\nb = undefined\n")
    shifted = Diagnostic(Range.of(7, 0, 7, 3), "Undefined name `q`", 2, "ruff", "F821")
    new = Diagnostic(Range.of(2, 4, 2, 13), "Undefined name `undefined`", 2, "ruff", "F821")
    assert diagnostics_delta([old], [shifted, new], [inserted_two_lines]) == [new]
    # without the shift the old diagnostic would look new
    assert diagnostics_delta([old], [shifted, new]) == [shifted, new]


def test_delta_inside_edited_region_and_full_change() -> None:
    before = [Diagnostic(Range.of(3, 0, 3, 1), "E", 1, "s", None)]
    moved_within_edit = [Diagnostic(Range.of(4, 0, 4, 1), "E", 1, "s", None)]
    edit = TextChange(Range.of(3, 0, 3, 5), "z\nzz")
    assert diagnostics_delta(before, moved_within_edit, [edit]) == []
    twice = moved_within_edit * 2
    assert diagnostics_delta(before, twice, [TextChange(None, "...")]) == twice[1:]


def test_linter_config_errors_are_clear() -> None:
    good = LinterSpec.from_dict(
        "sh", {"command": ["shellcheck", "-f", "gcc", "-"], "extensions": [".sh"]}
    )
    assert good.output_format == "lines" and good.applies_to(Path("x.sh"), None)
    for table, message in (
        ({"command": "ruff check"}, "list of strings"),
        ({"command": ["x"], "output_format": "xml"}, "unknown output_format"),
        ({"command": []}, "command is required"),
        ({"command": ["x"], "timeout_s": 0}, "positive"),
        ({"command": ["x"], "pattern": "(?P<line>\\d+)"}, "named groups"),
        ({"command": ["x"], "languages": "python"}, "list of strings"),
    ):
        with pytest.raises(ValueError, match=message):
            LinterSpec.from_dict("bad", table)


def test_a_linter_in_this_pythons_environment_goes_before_one_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapper on PATH that finds the real program per call (a pyenv shim: ~0.4 s a
    run) is not used when this environment has the program itself."""
    shim = tmp_path / "shims" / "python3"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\nexit 1\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", str(shim.parent))
    found = resolve_command(["python3", "-c", "{path}"], tmp_path / "a.py")
    assert Path(found[0]).parent != shim.parent
    assert found[1:] == ["-c", str(tmp_path / "a.py")]
    only_on_path = tmp_path / "shims" / "a-linter-only-on-path"
    only_on_path.write_text("#!/bin/sh\nexit 0\n")
    only_on_path.chmod(0o755)
    assert resolve_command([only_on_path.name], tmp_path)[0] == str(only_on_path)
