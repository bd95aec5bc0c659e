"""The Node LSP client library VS Code's client is built on, driving `shadowtab lsp`:
over the shim into a daemon (started by the shim itself, as an editor would), and
`--standalone`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clients_support import CLIENTS_DIR, ShadowtabEnv, assert_passed, run_client

NODE_CLIENT = CLIENTS_DIR / "node_lsp_client.mjs"

FEATURE_CHECKS = {
    "advertises inlineCompletionProvider",
    "incremental text sync",
    "advertises the shadowtab commands",
    "diagnostics: ruff F401 for `import os`",
    "diagnostics follow an incremental delete",
    "diagnostics follow an incremental insert",
    "300 didChange in a row: all applied, in order",
    "the flood undone in one change",
    "textDocument/inlineCompletion answers with items",
    "shadowtab/nextEdit answers {edits: [...]}",
    "textDocument/copilotInlineEdit answers {edits: [...]}",
    "lock.status: the user holds the lock at first",
    "shadowtab.lock.release sends lockChanged(model)",
    'shadowtab.lock.take [{"mode":"discard"}] answers',
    "shadowtab.lock.take sends lockChanged(user)",
    "shadowtab.lock.toggle sends lockChanged(model)",
    "extension parses shadowtab.lock.release and its lockChanged",
    "extension parses shadowtab.lock.take and its lockChanged",
    "unknown method: MethodNotFound",
    "wrong param types: InvalidParams",
    "the server still answers after bad input",
    "shutdown answers",
    "the server process exits after exit",
}


def test_node_client_drives_every_feature(
    node: str,
    node_modules: Path,
    shadowtab_env: ShadowtabEnv,
    workspace: Path,
    server_command: list[str],
    compiled_extension: Path,
) -> None:
    config = {
        "nodeModules": str(node_modules),
        "extensionOut": str(compiled_extension),
        "command": server_command,
        "file": str(workspace / "sample.py"),
        "scenario": "features",
    }
    run = run_client(
        [node, str(NODE_CLIENT), json.dumps(config)],
        env=shadowtab_env.env,
        cwd=str(workspace),
        timeout=120,
    )
    assert_passed(run, FEATURE_CHECKS)
    # The editor's buffer was never saved: the file on disk is untouched.
    assert (workspace / "sample.py").read_text().startswith("import os\n")


def test_node_client_reads_server_suggestions(
    node: str,
    node_modules: Path,
    shadowtab_env: ShadowtabEnv,
    workspace: Path,
    compiled_extension: Path,
) -> None:
    """The real server with its model replaced by a FixedPredictor: next edits and ghost
    text arrive in LSP coordinates, and the extension's parser reads them."""
    sample = workspace / "sample.py"
    config = {
        "nodeModules": str(node_modules),
        "extensionOut": str(compiled_extension),
        "command": [sys.executable, str(CLIENTS_DIR / "fixed_predictor_lsp.py"), str(sample)],
        "file": str(sample),
        "scenario": "suggestions",
    }
    run = run_client(
        [node, str(NODE_CLIENT), json.dumps(config)],
        env=shadowtab_env.env,
        cwd=str(workspace),
        timeout=120,
    )
    assert_passed(
        run,
        {
            "nextEdit: the predicted edit in UTF-16 line/character",
            "extension reads the edit",
            "the edit's command runs on the server",
            "inlineCompletion: the ghost text at the cursor",
        },
    )
