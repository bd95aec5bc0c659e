"""A headless Neovim shows a file while a coding agent writes it through the shadow
(`shadowtab shadow write`): the buffer gets the agent's edit, the disk does not. The
agent then renames and deletes files (`shadow mv`, `shadow rm`): Neovim's pending list
shows them, commits the rename alone and discards the delete."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from clients_support import (
    CLIENTS_DIR,
    NVIM_DIR,
    SAMPLE_SOURCE,
    ShadowtabEnv,
    assert_passed,
    finish,
)

AGENT_CHECKS = {
    "agent: the editor attaches",
    "agent: diagnostics of the file before the edit",
    "agent: the edit arrives in the buffer",
    "agent: the lock shows the model holding it with pending edits",
    "agent: ruff sees the unsaved edit",
    "agent: renames and deletes in the shadow",
    "pending list: the edit, the rename and the delete",
    "commit one rename: both of its files, nothing else",
    "discard the delete: the file stays, the edit is pending",
    "no Lua error",
    "the client stops cleanly",
}


def wait_for_file(path: Path, process: subprocess.Popen[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None and not path.exists():
        time.sleep(0.05)
    return path.exists()


def test_nvim_sees_the_agents_edit(nvim: str, daemon: ShadowtabEnv, workspace: Path) -> None:
    sample = workspace / "sample.py"
    renamed_from, renamed_to, deleted = (workspace / n for n in ("old.py", "new.py", "gone.py"))
    renamed_from.write_text("OLD = 1\n")
    deleted.write_text("GONE = 1\n")
    new_line = "import sys"
    config = {
        "rtp": str(NVIM_DIR),
        "cmd": [daemon.shadowtab, "lsp"],
        "file": str(sample),
        "signal_dir": str(workspace.parent),
        "expect_line": new_line,
        "renamed_from": str(renamed_from),
        "renamed_to": str(renamed_to),
        "deleted": str(deleted),
    }
    editor = subprocess.Popen(
        [
            nvim,
            "--headless",
            "--clean",
            "-l",
            str(CLIENTS_DIR / "nvim_agent_client.lua"),
            json.dumps(config),
        ],
        env=daemon.env,
        cwd=str(workspace),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    written = None
    try:
        if wait_for_file(workspace.parent / "nvim-ready", editor, timeout=60):
            written = subprocess.run(
                [daemon.shadowtab, "shadow", "write", str(sample), "--take", "--json"],
                input=SAMPLE_SOURCE.replace("import os\n", f"import os\n{new_line}\n"),
                env=daemon.env,
                cwd=str(workspace),
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            for args in (("mv", str(renamed_from), str(renamed_to)), ("rm", str(deleted))):
                moved = daemon.run("shadow", *args, "--root", str(workspace))
                assert moved.returncode == 0, moved.stderr
            (workspace.parent / "agent-done").write_text("1")
    finally:
        run = finish(editor, timeout=90)
    assert written is not None, f"Neovim never attached\n{run.explain()}"
    assert written.returncode == 0, written.stderr
    assert_passed(run, AGENT_CHECKS)
    assert sample.read_text() == SAMPLE_SOURCE, "the agent's edit must stay in the shadow"
