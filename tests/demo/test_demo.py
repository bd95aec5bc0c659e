"""`shadowtab demo`, the README's first command, runs end to end with the real model:
daemon, LSP through the shim, linting of unsaved text, predictions, the save lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_tours_the_daemon_and_leaves_nothing_running(tmp_path: Path) -> None:
    env = {**os.environ}
    for name in ("RUNTIME", "STATE", "CONFIG", "DATA"):
        env[f"SHADOWTAB_{name}_DIR"] = str(tmp_path / name.lower())
    env["SHADOWTAB_WEIGHTS"] = "q8_0"  # the demo's first start would measure them
    env["SHADOWTAB_MERGE_ADAPTER"] = "0"  # nor merge the adapter into them
    result = subprocess.run(
        [sys.executable, "-m", "shadowtab.daemon.cli", "demo"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "model: ready" in out
    assert "F401" in out and "F821" in out  # ruff on the unsaved text
    assert "ghost text" in out and "next edit" in out
    assert '+    print("Goodbye, " + name)' in out  # the model's edit, held in the shadow
    assert "on disk still:  True" in out
    assert "on disk now fixed: True" in out
    assert "daemon: stopped" in out
    assert not (tmp_path / "runtime" / "daemon.json").exists()
