"""Linting of unsaved text: each linter gets the shadow text on stdin (never the disk
file) and its output becomes LSP-shaped diagnostics. A linter that is missing, hangs or
crashes gives a degraded report (its failure noted), never an exception."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .line_text import LineIndex, utf16_len
from .model import Diagnostic, Position, Range
from .syntax_check import char_position, child_command, parse_syntax_answer

LINE_PATTERN = (
    r"^(?P<path>[^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?:(?P<severity>error|warning|note|info|hint)\s*:?\s*)?(?P<message>.*)$"
)
SEVERITIES = {"error": 1, "fatal": 1, "warning": 2, "note": 3, "info": 3, "hint": 4}
# Texts longer than this (in characters) are not linted: `[limits] lint_mb`. A lint's
# cost grows with the file (a 10 MB file took seconds of CPU per pause in typing, and its
# diagnostics tens of MB of JSON), for squiggles nobody scrolls through.
DEFAULT_LINT_MAX_MB = 4.0
LINTER_NICENESS = 10  # the nice value linter processes run at
# How long a killed linter's exit is waited for; past it the task ends without it (a
# grandchild that holds its pipe open)
REAP_LIMIT_S = 5.0


@dataclass(frozen=True)
class LinterSpec:
    """A linter as a config entry. `command` gets "{path}" replaced by the file's path and
    reads the text on stdin; `output_format` is "ruff-json", "lines" (path:line:col:
    [severity:] message, or `pattern`) or "python-syntax" (built in, no command)."""

    command: list[str]
    output_format: str
    languages: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    name: str = ""
    timeout_s: float = 10.0
    pattern: str | None = None

    def applies_to(self, path: Path, language_id: str | None) -> bool:
        if language_id and language_id in self.languages:
            return True
        return path.suffix in self.extensions

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> LinterSpec:
        """A spec from a config table; ValueError saying which field is wrong."""
        fmt = str(data.get("output_format", "lines"))
        if fmt not in PARSERS and fmt != "python-syntax":
            known = ", ".join([*PARSERS, "python-syntax"])
            raise ValueError(f"linter {name}: unknown output_format {fmt!r} (known: {known})")
        command = _strings(name, "command", data.get("command", []))
        if not command and fmt != "python-syntax":
            raise ValueError(f"linter {name}: a command is required")
        timeout = data.get("timeout_s", 10.0)
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"linter {name}: timeout_s must be a positive number")
        pattern = data.get("pattern")
        if pattern is not None:
            _check_pattern(name, pattern)
        return cls(
            command=command,
            output_format=fmt,
            languages=tuple(_strings(name, "languages", data.get("languages", []))),
            extensions=tuple(_strings(name, "extensions", data.get("extensions", []))),
            name=name,
            timeout_s=float(timeout),
            pattern=pattern,
        )


def _strings(name: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"linter {name}: {key} must be a list of strings")
    return list(value)


def _check_pattern(name: str, pattern: Any) -> None:
    try:
        groups = re.compile(pattern).groupindex if isinstance(pattern, str) else {}
    except re.error as exc:
        raise ValueError(f"linter {name}: bad pattern: {exc}") from None
    if not {"line", "message"} <= set(groups):
        raise ValueError(f"linter {name}: pattern needs named groups 'line' and 'message'")


RUFF = LinterSpec(
    command=["ruff", "check", "--output-format", "json", "--stdin-filename", "{path}", "-"],
    output_format="ruff-json",
    languages=("python",),
    extensions=(".py", ".pyi"),
    name="ruff",
)
PYTHON_SYNTAX = LinterSpec(
    command=[],
    output_format="python-syntax",
    languages=("python",),
    extensions=(".py",),
    name="python-syntax",
    # compile() of a few MB at low priority on a busy machine: seconds (a newer text
    # kills it sooner)
    timeout_s=30.0,
)
DEFAULT_LINTERS: dict[str, LinterSpec] = {"ruff": RUFF, "python-syntax": PYTHON_SYNTAX}


class LinterFailure(Exception):
    """A linter could not give an answer (missing, timed out, crashed, bad output)."""


@dataclass
class LintReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # linter name -> why
    skipped: str | None = None  # why no linter ran (the text is over the size limit)

    @property
    def degraded(self) -> bool:
        return bool(self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "failures": dict(self.failures),
            "skipped": self.skipped,
        }


# -- output parsers (run in a worker thread: their cost grows with the output) -----------
def parse_ruff_json(output: str, text: str, spec: LinterSpec) -> list[Diagnostic]:
    lines = LineIndex(text)
    diagnostics = []
    for item in json.loads(output or "[]"):
        start = item["location"]
        end = item.get("end_location") or start
        code = item.get("code")
        syntax = code in (None, "invalid-syntax")
        diagnostics.append(
            Diagnostic(
                Range(
                    char_position(lines, start["row"], start["column"]),
                    char_position(lines, end["row"], end["column"]),
                ),
                str(item["message"]),
                1 if syntax else 2,
                spec.name or "ruff",
                None if code is None else str(code),
            )
        )
    return diagnostics


def parse_lines(output: str, text: str, spec: LinterSpec) -> list[Diagnostic]:
    lines = LineIndex(text)
    pattern = re.compile(spec.pattern or LINE_PATTERN)
    diagnostics = []
    for raw in output.splitlines():
        match = pattern.match(raw)
        if match is None:
            continue
        found = match.groupdict()
        start = char_position(lines, int(found["line"]), int(found.get("col") or 1))
        end = Position(start.line, utf16_len(lines.line(start.line)[1]))
        severity = SEVERITIES.get((found.get("severity") or "error").lower(), 1)
        diagnostics.append(
            Diagnostic(
                Range(start, max(start, end)),
                found["message"].strip(),
                severity,
                spec.name,
                found.get("code"),
            )
        )
    return diagnostics


def parse_python_syntax(output: str, text: str, spec: LinterSpec) -> list[Diagnostic]:
    return parse_syntax_answer(output, text, spec.name or "python-syntax")


PARSERS = {"ruff-json": parse_ruff_json, "lines": parse_lines}
OUTPUT_PARSERS = {**PARSERS, "python-syntax": parse_python_syntax}


# -- running -----------------------------------------------------------------------------
def resolve_command(command: Sequence[str], path: Path) -> list[str]:
    """Fill in "{path}"; find the program in this Python's environment (a venv, then the
    interpreter it was made from), else on PATH: the environment's own binary, not a
    wrapper that finds one per call (a pyenv shim costs ~0.4 s a run; the lint gate is
    on the path of every suggestion)."""
    program = command[0]
    found = _in_environment(program) or shutil.which(program)
    if found is None:
        raise LinterFailure(f"{program}: not installed (not on PATH)")
    return [found, *(part.replace("{path}", str(path)) for part in command[1:])]


# This Python's script folders: a venv's, then the interpreter's it was made from.
_ENVIRONMENT_PATH = os.pathsep.join(
    dict.fromkeys(
        [
            os.path.dirname(sys.executable),
            sysconfig.get_path("scripts"),
            sysconfig.get_path("scripts", vars={"base": sys.base_prefix}),
        ]
    )
)


def _in_environment(program: str) -> str | None:
    return shutil.which(program, path=_ENVIRONMENT_PATH)


async def run_linter(
    spec: LinterSpec, path: Path, data: bytes, text: str, cwd: Path | None
) -> list[Diagnostic]:
    """Run one linter on `data` (the text, UTF-8) in a child process; its output is read
    in a worker thread. Cancelled (a newer text supersedes this one): the child is killed."""
    if spec.output_format == "python-syntax":
        argv = child_command(path)
    else:
        argv = resolve_command(spec.command, path)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
    )
    _lower_priority(process.pid)
    try:
        out, err = await asyncio.wait_for(process.communicate(data), spec.timeout_s)
    except TimeoutError as exc:
        raise LinterFailure(f"{spec.name}: timed out after {spec.timeout_s:g} s") from exc
    finally:
        if process.returncode is None:  # timed out or cancelled by a newer version
            _kill(process.pid)
            with contextlib.suppress(TimeoutError):  # bounded: a grandchild may hold a pipe
                await asyncio.shield(asyncio.wait_for(_reaped(process), REAP_LIMIT_S))
    return await asyncio.to_thread(_parse_output, spec, out, err, process.returncode, text)


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """The killed child's exit. Process.wait() also waits for the end of its pipes, and a
    pipe whose unread output reached the stream's limit is paused and never sees its
    end: what is left is read (and dropped) first."""
    streams = [stream for stream in (process.stdout, process.stderr) if stream is not None]
    await asyncio.gather(*(stream.read() for stream in streams))
    await process.wait()


def _kill(pid: int) -> None:
    """SIGKILL without reaping: asyncio's child watcher reaps and reports the exit.
    (Process.kill polls first, and that poll could reap a child that had just exited
    before the watcher did; asyncio then logged "Unknown child process pid".) Until the
    watcher reaps it, the pid stays the child's; only in the moment between that and the
    loop hearing of it could the pid be another's, as with any signal sent by pid."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _lower_priority(pid: int) -> None:
    """A linter is background work: on a machine of few cores, one at full priority takes
    CPU time from the daemon's event loop (text sync) and from the model's threads."""
    # OSError: gone already, or not permitted; then it runs at normal priority
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, LINTER_NICENESS)


def _parse_output(
    spec: LinterSpec, out: bytes, err: bytes, code: int | None, text: str
) -> list[Diagnostic]:
    try:
        return OUTPUT_PARSERS[spec.output_format](out.decode(errors="replace"), text, spec)
    except (ValueError, KeyError, TypeError) as exc:
        detail = err.decode(errors="replace").strip()[-300:] or str(exc)
        raise LinterFailure(f"{spec.name}: exit {code}, unreadable output: {detail}") from exc


def drop_duplicate_syntax_errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """ruff reports syntax errors too: keep one diagnostic per error line."""
    compiler_lines = {d.range.start.line for d in diagnostics if d.source == "python-syntax"}
    return [
        d
        for d in diagnostics
        if not (d.code == "invalid-syntax" and d.range.start.line in compiler_lines)
    ]


def linters_for(
    specs: Mapping[str, LinterSpec], path: Path, language_id: str | None
) -> list[tuple[str, LinterSpec]]:
    return [(name, spec) for name, spec in specs.items() if spec.applies_to(path, language_id)]


def size_skip(length: int, max_chars: int | None) -> str | None:
    """Why a text of `length` characters is not linted, or None: it is."""
    if max_chars is None or length <= max_chars:
        return None
    return (
        f"not linted: {length / 2**20:.1f} M characters, over the limit of "
        f"{max_chars / 2**20:g} M ([limits] lint_mb)"
    )


async def lint_text(
    specs: Mapping[str, LinterSpec],
    path: Path,
    text: str,
    language_id: str | None = None,
    cwd: Path | None = None,
    max_chars: int | None = None,
) -> LintReport:
    """Lint `text` with the linters that apply to it. Above `max_chars` none runs: the
    report says so in `skipped`. The heavy parts run in child processes and worker
    threads, so the calling event loop keeps answering meanwhile."""
    chosen = linters_for(specs, path, language_id)
    if not chosen:
        return LintReport()
    if (skipped := size_skip(len(text), max_chars)) is not None:
        return LintReport(skipped=skipped)
    data = await asyncio.to_thread(text.encode, "utf-8", "surrogatepass")
    results = await asyncio.gather(
        *(run_linter(spec, path, data, text, cwd) for _, spec in chosen), return_exceptions=True
    )
    report = LintReport()
    for (name, _), result in zip(chosen, results, strict=True):
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            report.failures[name] = _describe(result)
        else:
            report.diagnostics.extend(result)
    if len(chosen) > 1:
        report.diagnostics = await asyncio.to_thread(
            drop_duplicate_syntax_errors, report.diagnostics
        )
    return report


def _describe(error: BaseException) -> str:
    if isinstance(error, LinterFailure):
        return str(error)
    return f"{type(error).__name__}: {error}"
