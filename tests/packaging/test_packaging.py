"""The built wheel holds only the `shadowtab` namespace (no generic top-level names such
as `daemon` or `lsp`), and every subpackage imports from it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBPACKAGES = (
    "daemon",
    "lsp",
    "shadow_workspace",
    "inference",
    "inference.engines",
    "inference.engines.llama_cpp",
    "inference.next_edit",
    "inference.next_edit.formats",
    "editors",
)


def test_wheel_installs_the_namespace_package_only(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("shadowtab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_levels = {name.split("/")[0] for name in names}
    assert {t for t in top_levels if not t.startswith("shadowtab-")} == {"shadowtab"}
    assert "shadowtab/__init__.py" not in names  # a namespace package
    for part in SUBPACKAGES:
        assert f"shadowtab/{part.replace('.', '/')}/__init__.py" in names
    # the next-edit adapter's folder travels with the engine (its card at least)
    assert "shadowtab/inference/adapters/README.md" in names
    # the learned gates' weights: ghost text's beside the adapter, propagation's in its package
    assert "shadowtab/inference/adapters/shadowtab-next-edit.ghost-gate.json" in names
    assert "shadowtab/inference/next_edit/propagation/propagation_gate.json" in names
    assert not any(name.startswith("training/") for name in names)
    # the editor clients: the built VS Code extension and the Neovim module, no npm needed
    assert "shadowtab/editors/vscode/shadowtab.vsix" in names
    assert "shadowtab/editors/nvim/lua/shadowtab/init.lua" in names
    assert not any(name.startswith("shadowtab/editors/vscode/src/") for name in names)

    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), wheel],
        check=True,
        capture_output=True,
    )
    probe = (
        "import importlib, sys\n"
        f"for part in {SUBPACKAGES!r}:\n"
        "    module = importlib.import_module('shadowtab.' + part)\n"
        "    print(module.__file__)\n"
        "from shadowtab.daemon.cli.main import main\n"
        "sys.exit(main(['--version']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    files = result.stdout.split()
    assert all(path.startswith(str(target)) for path in files[: len(SUBPACKAGES)]), files
    assert files[-1] == "0.1.0"
