"""Headless Neovim as a real client, through our editors/nvim module: over the shim into a
daemon and `--standalone`; and Neovim plus the Node client on one daemon at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from clients_support import (
    CLIENTS_DIR,
    NVIM_DIR,
    ShadowtabEnv,
    assert_passed,
    finish,
    run_client,
)

NVIM_CLIENT = CLIENTS_DIR / "nvim_client.lua"
NODE_CLIENT = CLIENTS_DIR / "node_lsp_client.mjs"

NVIM_FEATURE_CHECKS = {
    "setup() starts the client for a python buffer",
    "ruff F401 on line 1 arrives as diagnostics",
    "deleting the import clears it (incremental sync)",
    "F401 after an emoji lands on the right column",
    "typing asks for a next edit by itself",
    "textDocument/inlineCompletion answers with items",
    "shadowtab/nextEdit answers",
    "textDocument/copilotInlineEdit answers {edits}",
    "a next edit is drawn as extmarks",
    "accepting applies the edit",
    "the server follows the accepted edit",
    "lock.release: lockChanged(model) arrives",
    "statusline follows lockChanged",
    "lock.take discard: lockChanged(user) arrives",
    ":ShadowtabLockTake keep gives the lock back",
    "no Lua error",
    "the client stops cleanly",
}
SUGGESTION_CHECKS = {
    "a cursor resting somewhere new warms the prompt there",
    "the server suggests a next edit",
    'drawn: "hello" struck as DiffDelete, "goodbye" as virtual text',
    "<Tab> accepts the next edit",
    "accepting runs the edit's command on the server",
    "ghost text from inlineCompletion is drawn at the cursor",
    "accepting ghost text inserts it",
    "no Lua error",
}
CHOICE_CHECKS = {
    "typing: one ghost text choice, drawn",
    "<M-]> asks again (Invoked) and shows the next choice",
    "<M-]> again wraps around to the first, without asking again",
    ":ShadowtabPreviousSuggestion goes back",
    "accepting inserts the choice shown",
    "next edits: the first is shown",
    "<M-]> shows the next edit after it",
    "<Tab> accepts the next edit shown",
    "no Lua error",
}
PEER_CHECKS = {
    "peer: the other editor releasing the lock reaches us",
    "peer: our take reaches the daemon",
    "peer: diagnostics still follow our edits",
    "peer: lock commands still work",
    "peer: next-edit requests still work",
    "peer: `shadowtab lock release` reaches the editor",
    "peer: and the editor takes it back",
}


def nvim_args(nvim: str, config: dict[str, object]) -> list[str]:
    return [nvim, "--headless", "--clean", "-l", str(NVIM_CLIENT), json.dumps(config)]


def nvim_config(command: list[str], workspace: Path, scenario: str) -> dict[str, object]:
    return {
        "rtp": str(NVIM_DIR),
        "cmd": command,
        "file": str(workspace / "sample.py"),
        "scenario": scenario,
        "signal_dir": str(workspace.parent),
    }


def test_nvim_client_drives_every_feature(
    nvim: str, shadowtab_env: ShadowtabEnv, workspace: Path, server_command: list[str]
) -> None:
    config = nvim_config(server_command, workspace, "features")
    run = run_client(
        nvim_args(nvim, config), env=shadowtab_env.env, cwd=str(workspace), timeout=120
    )
    assert_passed(run, NVIM_FEATURE_CHECKS)
    assert (workspace / "sample.py").read_text().startswith("import os\n"), "nothing was saved"


def wait_for_file(path: Path, process: subprocess.Popen[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists():
            return True
        time.sleep(0.05)
    return path.exists()


def test_two_editors_share_one_daemon(
    nvim: str, node: str, node_modules: Path, daemon: ShadowtabEnv, workspace: Path
) -> None:
    """A lock change by one editor reaches the other; one editor dying (SIGKILL of its
    `shadowtab lsp`) leaves the other working; the CLI's lock change reaches the editor."""
    command = [daemon.shadowtab, "lsp"]
    signal_dir = workspace.parent
    editor = subprocess.Popen(
        nvim_args(nvim, nvim_config(command, workspace, "peer")),
        env=daemon.env,
        cwd=str(workspace),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = wait_for_file(signal_dir / "nvim-ready", editor, timeout=60)
        node_config = {
            "nodeModules": str(node_modules),
            "command": command,
            "file": str(workspace / "sample.py"),
            "scenario": "peer",
        }
        node_run = run_client(
            [node, str(NODE_CLIENT), json.dumps(node_config)] if ready else ["true"],
            env=daemon.env,
            cwd=str(workspace),
            timeout=90,
        )
        (signal_dir / "node-gone").write_text("1")
        cli_release = None
        if wait_for_file(signal_dir / "nvim-waits-for-cli", editor, timeout=60):
            cli_release = daemon.run("lock", "release", "--root", str(workspace))
    finally:
        nvim_run = finish(editor, timeout=90)
    assert ready, f"Neovim never attached\n{nvim_run.explain()}"
    assert_passed(node_run, {"peer: sees the lock change made by the other editor"})
    assert cli_release is not None and cli_release.returncode == 0, (
        f"`shadowtab lock release` did not run or failed: {cli_release}\n{nvim_run.explain()}"
    )
    assert_passed(nvim_run, PEER_CHECKS)


def test_nvim_shows_and_accepts_server_suggestions(
    nvim: str, shadowtab_env: ShadowtabEnv, workspace: Path
) -> None:
    """The real server, its model replaced by a FixedPredictor: Neovim draws the next edit
    and the ghost text it returns, and the keys accept them; a cursor moved without an
    edit reaches the server, which warms the prompt there."""
    sample = workspace / "sample.py"
    warms = workspace.parent / "warms.log"  # the stand-in writes where it was warmed
    stand_in = CLIENTS_DIR / "fixed_predictor_lsp.py"
    command = [sys.executable, str(stand_in), "--warm-log", str(warms), str(sample)]
    config = nvim_config(command, workspace, "suggestions")
    run = run_client(
        nvim_args(nvim, config), env=shadowtab_env.env, cwd=str(workspace), timeout=120
    )
    assert_passed(run, SUGGESTION_CHECKS)
    assert "goodbye" not in sample.read_text(), "accepting an edit must not save the file"


def test_nvim_cycles_through_ghost_text_choices(
    nvim: str, shadowtab_env: ShadowtabEnv, workspace: Path
) -> None:
    """The real server, its model replaced by a stand-in that offers a second ghost text
    when asked, and two next edits: the cycle keys show each choice in turn (asking for
    the ghost text's), and the keys accept the one shown."""
    sample = workspace / "sample.py"
    stand_in = CLIENTS_DIR / "fixed_predictor_lsp.py"
    command = [sys.executable, str(stand_in), "--choices", str(sample)]
    config = nvim_config(command, workspace, "choices")
    run = run_client(
        nvim_args(nvim, config), env=shadowtab_env.env, cwd=str(workspace), timeout=120
    )
    assert_passed(run, CHOICE_CHECKS)
