"""A coding agent's write-and-lint round trip on a 1k-line Python file, side by side with
a plain lint of the same text, in fresh temp dirs (engine off; the daemon's default
linters: ruff and the Python compiler).

Measured per round (each write changes one line, so the shadow text really changes):
- lint_only: the default linters run directly on the new text, in this process (what a
  lint costs without the daemon: ruff's process and the compiler);
- write_and_lint: the control socket's `shadow.write` (the edit into the shadow, the new
  text linted, the diagnostics added and removed answered; the text before it is the one
  the previous write linted, a lint-cache hit);
- cli_write: `shadowtab shadow write` end to end (interpreter start included);
- mcp_write: the MCP `write_file` tool through the `mcp` package's stdio client and
  `shadowtab mcp` (what an agent such as Claude Code waits for).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "shadowtab.daemon.cli"]


def python_source(lines: int) -> str:
    """A plausible module of `lines` lines: small functions, one unused import."""
    out = ["import os", "import sys", "", ""]
    index = 0
    while len(out) < lines - 1:
        out += [
            f"def function_{index}(value: int) -> int:",
            f'    """Return value plus {index}."""',
            f"    total = value + {index}",
            "    return total * 2 if total > 0 else sys.maxsize",
            "",
        ]
        index += 1
    out = [*out[: lines - 1], "RESULT = function_0(1)"]
    return "\n".join(out) + "\n"


def fresh_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHADOWTAB_")}
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        env[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    env["SHADOWTAB_ENGINE_KIND"] = "off"
    return env


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def edited(source: str, round_index: int) -> str:
    return source.replace("RESULT = function_0(1)", f"RESULT = function_0({round_index + 2})")


def control_rounds(
    root: Path, target: Path, source: str, rounds: int, first: int = 0
) -> dict[str, list[float]]:
    """Rounds `first`, `first` + 1, ...: each writes a text no earlier round wrote (so its
    lint is a linter run, never a cache hit)."""
    from shadowtab.daemon.client import request
    from shadowtab.shadow_workspace import DEFAULT_LINTERS, lint_text

    def lint(text: str) -> None:
        report = asyncio.run(lint_text(DEFAULT_LINTERS, target, text, "python", cwd=root))
        assert not report.failures, report.failures

    def write(text: str) -> None:
        files = [{"path": str(target), "text": text}]
        reply = request("shadow.write", timeout=60, root=str(root), files=files, take=True)
        assert reply["files"][0]["changed"], reply

    times: dict[str, list[float]] = {"lint_only": [], "write_and_lint": []}
    for index in range(first, first + rounds):
        text = edited(source, index)
        times["lint_only"].append(timed(lambda text=text: lint(text + "# direct\n")))  # type: ignore[misc]
        times["write_and_lint"].append(timed(lambda text=text: write(text)))  # type: ignore[misc]
    return times


def cli_rounds(
    root: Path, target: Path, source: str, rounds: int, env: dict[str, str]
) -> list[float]:
    def write(text: str) -> None:
        subprocess.run(
            [*CLI, "shadow", "write", str(target), "--json"],
            input=text,
            text=True,
            env=env,
            cwd=root,
            check=True,
            capture_output=True,
            timeout=120,
        )

    return [timed(lambda i=i: write(edited(source, 1000 + i))) for i in range(rounds)]  # type: ignore[misc]


async def mcp_rounds(root: Path, source: str, rounds: int, env: dict[str, str]) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "shadowtab.daemon.cli", "mcp", "--root", str(root), "--take"],
        env=env,
        cwd=str(root),
    )
    times = []
    async with stdio_client(params) as (reader, writer), ClientSession(reader, writer) as session:
        await session.initialize()
        for index in range(rounds):
            arguments = {"path": "module.py", "content": edited(source, 2000 + index)}
            started = time.perf_counter()
            result = await session.call_tool("write_file", arguments)
            times.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result.content
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="stagent-", dir="/tmp"))  # short: socket paths
    env = fresh_env(base)
    os.environ.update({k: v for k, v in env.items() if k.startswith("SHADOWTAB_")})
    root = base / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    target = root / "module.py"
    source = python_source(args.lines)
    target.write_text(source)
    try:
        subprocess.run([*CLI, "daemon", "start"], env=env, check=True, capture_output=True)
        control_rounds(root, target, source, 2, first=500)  # warm: imports, ruff's first start
        times = control_rounds(root, target, source, args.rounds)
        times["cli_write"] = cli_rounds(root, target, source, args.rounds, env)
        times["mcp_write"] = asyncio.run(mcp_rounds(root, source, args.rounds, env))
        assert target.read_text() == source, "an agent write reached the disk"
    finally:
        subprocess.run([*CLI, "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)

    figures: dict[str, Any] = {
        "benchmark": "agent_write_latency",
        "lines": args.lines,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
    }
    for name, values in times.items():
        figures[f"{name}_p50_ms"] = round(statistics.median(values), 1)
        figures[f"{name}_p90_ms"] = round(percentile(values, 0.9), 1)
    figures["write_and_lint_over_lint_only"] = round(
        figures["write_and_lint_p50_ms"] / figures["lint_only_p50_ms"], 2
    )
    figures["disk_unchanged"] = True
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
