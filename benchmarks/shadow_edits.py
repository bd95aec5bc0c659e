"""Shadow workspace benchmark, one JSON line:

keystroke edits per second from one editor (ShadowWorkspace.edit_document,
the didChange path, journal on) on a 10 MB file and on a 1k-line file, side by side with
naive full-string editing of the 10 MB text, and lint latency p50 (ruff + syntax check
over stdin) for a 1k-line file.

two_editors: two real LSP clients on one daemon (`shadowtab lsp` pumps), with the
default settings (the default linters on, the engine off), both showing a 1 MB and then
a 10 MB Python file; the first types in its middle, a keystroke every 100 ms; the second
applies each mirrored change (workspace/applyEdit) and reports it back as its own
didChange, as editors do. p50 and p90 from the first's didChange to the second's
applyEdit end to end, how many keystrokes arrived within 100 ms, the daemon's own time per
didChange (shadow edit + forwarding), whether the buffers are equal right after the last
one, and whether the file was linted (or skipped: over `[limits] lint_mb`).

    python -m benchmarks.shadow_edits [--edits 5000] [--mirrored 20] [--skip-two-editors]
        [--two-editors-only] [--sizes-mb 1,10] [--lint-mb MB]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from shadowtab.shadow_workspace import Range, ShadowWorkspace, TextChange, path_to_uri

LINE = "    value_{i} = compute(value_{j}, 'text é')  # comment\n"


def python_source(lines: int) -> str:
    body = [
        f"def function_{i}(value_{i}: int) -> int:\n" + LINE.format(i=i, j=i)
        for i in range(lines // 3)
    ]
    body = [chunk + f"    return value_{i}\n" for i, chunk in enumerate(body)]
    return "import os\n\n\n" + "".join(body)


def keystrokes_per_second(ws: ShadowWorkspace, path: Path, text: str, count: int) -> float:
    """Type `count` characters: bursts of 20 at one spot, then a jump elsewhere."""
    path.write_text(text)
    uri = path_to_uri(path)
    doc = ws.open_document(uri, text, 1, "python", editor=1)
    rng = random.Random(7)
    line = column = 0
    started = time.perf_counter()
    for index in range(count):
        if index % 20 == 0:
            line, column = rng.randrange(doc.line_count), 4
        position = Range.of(line, column, line, column)
        ws.edit_document(uri, 1, doc.version + 1, [TextChange(position, "x")])
        column += 1
    elapsed = time.perf_counter() - started
    ws.close_document(uri, editor=1)
    return count / elapsed


def naive_edits_per_second(text: str, count: int) -> float:
    """The baseline: a str per edit plus a full re-split to find lines."""
    started = time.perf_counter()
    for index in range(count):
        offset = (index * 7919) % len(text)
        text = text[:offset] + "x" + text[offset:]
        text.split("\n")
    return count / (time.perf_counter() - started)


async def lint_p50_ms(ws: ShadowWorkspace, path: Path, text: str, runs: int) -> tuple[float, int]:
    await ws.lint_text(path, text, "python")  # warm the file cache of the ruff binary
    times = []
    found = 0
    for run in range(runs):
        variant = text + f"unused_{run} = undefined_{run}\n"
        started = time.perf_counter()
        report = await ws.lint_text_report(path, variant, "python")
        times.append((time.perf_counter() - started) * 1000)
        if report.degraded:
            raise RuntimeError(f"a linter failed: {report.failures}")
        found = len(report.diagnostics)
    return statistics.median(times), found


def ten_megabytes() -> str:
    return megabytes(10)


def megabytes(size_mb: float) -> str:
    """Python source of `size_mb` MB (valid up to its last, cut line)."""
    size = int(size_mb * 1024 * 1024)
    big = python_source(max(30, int(180_000 * size_mb / 10)))
    while len(big.encode()) < size:
        big += big[: size - len(big.encode()) + 1]
    return big


class Buffer:
    """An editor's buffer as lines (what a keystroke touches is one line, not 10 MB)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.version = 1

    def apply(self, edit: types.TextEdit) -> None:
        start, end = edit.range.start, edit.range.end  # BMP text: UTF-16 units = chars
        head = self.lines[start.line][: start.character]
        tail = self.lines[end.line][end.character :]
        new = (head + edit.new_text + tail).split("\n")
        self.lines[start.line : end.line + 1] = new
        self.version += 1

    def text(self) -> str:
        return "\n".join(self.lines)


async def editor(env: dict[str, str], root: Path) -> LanguageClient:
    client = LanguageClient("shadowtab-bench", "1")
    await client.start_io(sys.executable, "-m", "shadowtab.daemon.cli", "lsp", env=env)
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=True)
    )
    await client.initialize_async(
        types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
    )
    client.initialized(types.InitializedParams())
    return client


def open_document(client: LanguageClient, uri: str, text: str) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


def send_change(client: LanguageClient, uri: str, version: int, edit: types.TextEdit) -> None:
    change = types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[change],
        )
    )


async def two_editors(
    text: str, keystrokes: int, lint_mb: float | None = None
) -> dict[str, object]:
    """See the module docstring; a daemon of its own in fresh dirs, default settings."""
    with tempfile.TemporaryDirectory(prefix="stbench-", dir="/tmp") as folder:
        base = Path(folder)
        root = base / "proj"
        (root / ".git").mkdir(parents=True)
        env = {**os.environ, **{f"SHADOWTAB_{d.upper()}_DIR": str(base / d) for d in DIRS}}
        # Text sync and the default linters: no model (its threads would share the cores).
        env["SHADOWTAB_ENGINE_KIND"] = "off"
        if lint_mb is not None:
            env["SHADOWTAB_LIMITS_LINT_MB"] = str(lint_mb)
        path = root / "big.py"
        path.write_text(text)
        try:
            result = await _two_editors(env, root, path.as_uri(), text, keystrokes)
            return {**result, "lint_mb": lint_mb}  # None: the default limit
        finally:
            command = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "stop"]
            subprocess.run(command, env=env, capture_output=True, timeout=60, check=False)


DIRS = ("runtime", "state", "config", "data")


def daemon_stats(env: dict[str, str]) -> dict[str, Any]:
    """The daemon's `stats` reply (asked from a process that has the test dirs; a daemon
    whose event loop is busy may take a while to answer)."""
    code = "import json; from shadowtab.daemon.client import request; "
    code += "print(json.dumps(request('stats', timeout=60), default=str))"
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=90)
    if result.returncode != 0:
        raise RuntimeError(f"daemon stats failed: {result.stderr.strip()[-500:]}")
    return dict(json.loads(result.stdout))


async def _two_editors(
    env: dict[str, str], root: Path, uri: str, text: str, keystrokes: int
) -> dict[str, object]:
    first, second = await editor(env, root), await editor(env, root)
    for client in (first, second):
        client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: None)
    typed, mirrored = Buffer(text), Buffer(text)
    arrived: dict[int, float] = {}

    @second.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        now = time.perf_counter()
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            for edit in change.edits:
                assert isinstance(edit, types.TextEdit)
                mirrored.apply(edit)
                arrived[len(arrived)] = now
                send_change(second, uri, mirrored.version, edit)  # the echo
        return types.ApplyWorkspaceEditResult(applied=True)

    try:
        open_document(first, uri, text)
        open_document(second, uri, text)
        for client in (first, second):  # both opens handled
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="shadowtab.lock.status", arguments=[])
            )
        middle = len(typed.lines) // 2
        sent: list[float] = []
        for index in range(keystrokes):
            position = types.Position(line=middle, character=4 + index)
            edit = types.TextEdit(range=types.Range(start=position, end=position), new_text="x")
            typed.apply(edit)
            sent.append(time.perf_counter())
            send_change(first, uri, typed.version, edit)
            await asyncio.sleep(0.1)
        deadline = time.monotonic() + 30
        while len(arrived) < keystrokes and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        equal_at_once = typed.text() == mirrored.text()
        hub = daemon_stats(env)["hub"]
    finally:
        for client in (first, second):
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
    latencies = [(arrived[i] - sent[i]) * 1000 for i in range(len(arrived)) if i < len(sent)]
    within_100 = sum(1 for ms in latencies if ms <= 100)
    skipped = [uri for ws in hub["workspaces"] for uri in ws.get("lint_skipped", {})]
    return {
        "file_mb": round(len(text.encode()) / 2**20, 2),
        "keystrokes": keystrokes,
        "interval_ms": 100,
        "mirrored": len(arrived),
        "mirrored_within_100ms": within_100,
        "end_to_end_p50_ms": _percentile(latencies, 50),
        "end_to_end_p90_ms": _percentile(latencies, 90),
        "end_to_end_max_ms": round(max(latencies), 2) if latencies else None,
        "end_to_end_ms": [round(ms, 1) for ms in latencies],  # in the order typed
        "server_p50_ms": hub["text_sync"].get("p50_ms"),
        "server_changes": hub["text_sync"].get("changes"),
        "buffers_equal_after_last": equal_at_once,
        "engine": "off",
        "linters": "default",
        "linted": None if "lint" not in hub else not skipped,
        "lint_runs": hub.get("lint", {}).get("runs"),
        "lint_max_ms": hub.get("lint", {}).get("max_ms"),
        "targets": {"end_to_end_p50_ms": 50.0, "mirrored_within_100ms": keystrokes},
    }


def _percentile(values: list[float], percent: int) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, len(ordered) * percent // 100)], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--lint-runs", type=int, default=21)
    parser.add_argument("--mirrored", type=int, default=20, help="two-editor keystrokes")
    parser.add_argument("--skip-two-editors", action="store_true")
    parser.add_argument("--two-editors-only", action="store_true")
    parser.add_argument("--sizes-mb", default="1,10", help="two-editor file sizes")
    parser.add_argument("--lint-mb", type=float, default=None, help="[limits] lint_mb")
    args = parser.parse_args()
    if args.two_editors_only:
        print(json.dumps({"benchmark": "shadow_edits", "two_editors": run_two_editors(args)}))
        return
    big = ten_megabytes()
    small = python_source(1000)
    with tempfile.TemporaryDirectory() as folder:
        root, state = Path(folder, "root"), Path(folder, "state")
        root.mkdir()
        ws = ShadowWorkspace(root, state, watch=False)
        try:
            big_rate = keystrokes_per_second(ws, root / "big.py", big, args.edits)
            small_rate = keystrokes_per_second(ws, root / "small.py", small, args.edits)
            naive_rate = naive_edits_per_second(big, max(20, args.edits // 100))
            lint_ms, diagnostics = asyncio.run(
                lint_p50_ms(ws, root / "small.py", small, args.lint_runs)
            )
        finally:
            ws.close()
    figures = {
        "benchmark": "shadow_edits",
        "big_file_mb": round(len(big.encode()) / 2**20, 2),
        "big_file_lines": big.count("\n"),
        "keystrokes_per_s_10mb": round(big_rate),
        "keystrokes_per_s_1k_lines": round(small_rate),
        "naive_str_edits_per_s_10mb": round(naive_rate, 1),
        "speedup_10mb_vs_naive": round(big_rate / naive_rate, 1),
        "journal": True,
        "lint_p50_ms_1k_lines": round(lint_ms, 1),
        "lint_runs": args.lint_runs,
        "lint_diagnostics": diagnostics,
        "small_file_lines": small.count("\n"),
    }
    if not args.skip_two_editors:
        figures["two_editors"] = run_two_editors(args)
    print(json.dumps(figures))


def run_two_editors(args: argparse.Namespace) -> list[dict[str, object]]:
    sizes = [float(size) for size in args.sizes_mb.split(",")]
    return [
        asyncio.run(two_editors(megabytes(size), args.mirrored, args.lint_mb)) for size in sizes
    ]


if __name__ == "__main__":
    main()
