"""A third-party next-edit plugin in headless Neovim: copilot-lsp (vendored under
vendor/copilot-lsp, pinned, unmodified) speaks Copilot's textDocument/copilotInlineEdit;
configured as its README says, with `cmd` pointing at shadowtab instead of GitHub's
copilot-language-server, it asks for, draws and applies our next edits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clients_support import CLIENTS_DIR, ShadowtabEnv, assert_passed, run_client

COPILOT_CLIENT = CLIENTS_DIR / "copilot_lsp_client.lua"
VENDORED = CLIENTS_DIR / "vendor" / "copilot-lsp"

COMMON_CHECKS = {
    'vim.lsp.enable("copilot_ls") starts shadowtab for the buffer',
    "typing makes copilot-lsp ask textDocument/copilotInlineEdit",
    "the answer has the shape copilot-lsp reads ({edits: [{range, text, textDocument, command}]})",
    "copilot-lsp printed no error (vim.notify)",
    "the client stops cleanly",
}
EDIT_CHECKS = COMMON_CHECKS | {
    "our edit names the version copilot-lsp asked for",
    'copilot-lsp draws it: the line with "hello" as CopilotLspNesDelete, with "goodbye" below',
    "<Tab> (its README mapping) walks to the edit and applies it",
    "the suggestion is cleared after applying",
    "the server's shadow has the applied edit (shadowtab.shadow.diff)",
}


def run_copilot_lsp(
    nvim: str, env: ShadowtabEnv, workspace: Path, command: list[str], expect_edit: bool
) -> None:
    config = {
        "vendor": str(VENDORED),
        "cmd": command,
        "file": str(workspace / "sample.py"),
        "expect_edit": expect_edit,
    }
    # Not `nvim -l`: the plugin reacts to TextChanged, which only Neovim's main loop fires.
    args = [nvim, "--headless", "--clean", "-c", f"luafile {COPILOT_CLIENT}"]
    run = run_client(
        args,
        env={**env.env, "COPILOT_LSP_TEST": json.dumps(config)},
        cwd=str(workspace),
        timeout=120,
    )
    assert_passed(run, EDIT_CHECKS if expect_edit else COMMON_CHECKS)


def test_copilot_lsp_draws_and_applies_our_next_edit(
    nvim: str, shadowtab_env: ShadowtabEnv, workspace: Path
) -> None:
    """The real server with its model replaced by a stand-in that always suggests
    "hello" -> "goodbye" (tests/clients/fixed_predictor_lsp.py): the plugin is under test."""
    sample = workspace / "sample.py"
    command = [sys.executable, str(CLIENTS_DIR / "fixed_predictor_lsp.py"), str(sample)]
    run_copilot_lsp(nvim, shadowtab_env, workspace, command, expect_edit=True)
    assert "goodbye" not in sample.read_text(), "applying a next edit must not save the file"


def test_copilot_lsp_on_shadowtab_lsp(
    nvim: str, shadowtab_env: ShadowtabEnv, workspace: Path, server_command: list[str]
) -> None:
    """`shadowtab lsp` (through the daemon, and --standalone) without a model: the plugin
    attaches, asks, gets `{edits: []}` and shows nothing, without an error."""
    run_copilot_lsp(nvim, shadowtab_env, workspace, server_command, expect_edit=False)
