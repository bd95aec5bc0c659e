"""What the real-client tests share: paths, the isolated shadowtab environment, and running
a client script (Node or headless Neovim) and reading its checks: each script prints one
JSON object per line, {"check": name, "ok": bool, "detail": ...}."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
VSCODE_DIR = REPO_ROOT / "editors" / "vscode"
NVIM_DIR = REPO_ROOT / "editors" / "nvim"
CLIENTS_DIR = Path(__file__).resolve().parent

# The unused import on line 1 is what ruff (F401) reports; the tests watch it come and go.
SAMPLE_SOURCE = "import os\n\n\ndef greet(name: str) -> str:\n    return 'hello ' + name\n"
DIR_VARS = (
    "SHADOWTAB_RUNTIME_DIR",
    "SHADOWTAB_STATE_DIR",
    "SHADOWTAB_CONFIG_DIR",
    "SHADOWTAB_DATA_DIR",
)

XDG_VARS = ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")


@dataclass(frozen=True)
class ShadowtabEnv:
    """An environment in which `shadowtab` uses only this test's directories."""

    env: dict[str, str]
    shadowtab: str  # the executable

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.shadowtab, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@dataclass(frozen=True)
class ClientRun:
    returncode: int
    checks: list[dict[str, Any]]
    stdout: str
    stderr: str

    def failed(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if not check.get("ok")]

    def names(self) -> set[str]:
        return {str(check.get("check")) for check in self.checks}

    def explain(self) -> str:
        failed = "\n".join(json.dumps(check)[:2000] for check in self.failed())
        return f"exit {self.returncode}\nfailed checks:\n{failed}\nstderr:\n{self.stderr[-4000:]}"


def parse_checks(stdout: str) -> list[dict[str, Any]]:
    checks = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict) and "check" in parsed:
                checks.append(parsed)
    return checks


def finish(process: subprocess.Popen[str], timeout: float) -> ClientRun:
    """Wait for a started client script; kill it (and report) if it overruns."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        stderr += f"\n[killed after {timeout} s]"
    return ClientRun(process.returncode, parse_checks(stdout), stdout, stderr)


def run_client(args: list[str], env: dict[str, str], cwd: str, timeout: float) -> ClientRun:
    process = subprocess.Popen(
        args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return finish(process, timeout)


def assert_passed(run: ClientRun, expected_checks: set[str] | None = None) -> None:
    """Every check passed, the script exited 0, and (if given) these checks ran."""
    assert run.checks, f"the client reported no checks\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    assert not run.failed() and run.returncode == 0, run.explain()
    if expected_checks is not None:
        missing = expected_checks - run.names()
        assert not missing, f"checks that did not run: {sorted(missing)}\n{run.explain()}"


def lsp_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def server_capabilities(shadowtab: ShadowtabEnv, cwd: Path) -> dict[str, Any]:
    """What `shadowtab lsp --standalone` answers to initialize (then shutdown, exit)."""
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    result = subprocess.run(
        [shadowtab.shadowtab, "lsp", "--standalone"],
        input=b"".join(lsp_frame(m) for m in messages),
        env=shadowtab.env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )
    for body in result.stdout.split(b"Content-Length: ")[1:]:
        message = json.loads(body.split(b"\r\n\r\n", 1)[1])
        if message.get("id") == 1:
            return dict(message["result"]["capabilities"])
    raise AssertionError(f"no initialize result\n{result.stdout!r}\n{result.stderr!r}")
