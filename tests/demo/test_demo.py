"""`shadowtab demo`, the README's first command, end to end with the real model and the
daemon's default settings, in an environment holding only the base dependencies (what
`pip install .` brings): daemon, engine worker, the default weights and merged adapter,
LSP through the shim, linting of unsaved text, predictions, the save lock. And when the
model cannot load, the demo ends within seconds, saying why and what to do."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
from base_environment import base_environment

# The first start converts the packaged weights and times them: minutes on a busy machine.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The converted weights, made once for the module's tests (as a user's data dir)."""
    return tmp_path_factory.mktemp("data")


def run_cli(
    args: list[str], tmp_path: Path, data_dir: Path, also_block: Iterable[str] = ()
) -> subprocess.CompletedProcess[str]:
    env = base_environment(tmp_path / "base-env", also_block)
    for name in ("RUNTIME", "STATE", "CONFIG"):
        env[f"SHADOWTAB_{name}_DIR"] = str(tmp_path / name.lower())
    env["SHADOWTAB_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "shadowtab.daemon.cli", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=840,
    )


def test_the_environment_holds_base_dependencies_only(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the dev extras bring torch; the check needs it present")
    env = base_environment(tmp_path / "base-env")
    probe = "import gguf, llama_cpp, pygls\ntry:\n    import torch\nexcept ImportError:\n"
    probe += "    print('refused')\n"
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "refused"


def test_demo_tours_the_daemon_and_leaves_nothing_running(tmp_path: Path, data_dir: Path) -> None:
    result = run_cli(["demo"], tmp_path, data_dir)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "model: ready" in out
    assert "F401" in out and "F821" in out  # ruff on the unsaved text
    assert "ghost text" in out and "next edit" in out
    assert '+    print("Goodbye, " + name)' in out  # the fix, held in the shadow
    # whose edit it is, said: the model's suggestion, or the tour's on the model's behalf
    assert "its next edit from step 2" in out or "on the model's behalf" in out
    assert "on disk still:  True" in out
    assert "on disk now fixed: True" in out
    assert "daemon: stopped" in out
    assert not (tmp_path / "runtime" / "daemon.json").exists()


def test_predict_runs_the_default_engine_in_process(tmp_path: Path, data_dir: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a\n")
    result = run_cli(["predict", f"{sample}:6:13", "--kind", "inline"], tmp_path, data_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ghost text" in result.stdout
    assert "n_ctx" not in result.stderr  # llama.cpp's own log lines stay out of the terminal


def test_a_model_that_cannot_load_ends_the_demo_with_the_reason(
    tmp_path: Path, data_dir: Path
) -> None:
    started = time.monotonic()
    result = run_cli(["demo"], tmp_path, data_dir, also_block=["gguf"])
    assert result.returncode == 1, result.stdout + result.stderr
    assert time.monotonic() - started < 60
    assert "the model failed to load" in result.stderr
    assert "pip install gguf" in result.stderr  # what to do, not only what went wrong
    assert "daemon: stopped" in result.stdout


def test_predict_says_why_the_model_cannot_load(tmp_path: Path, data_dir: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("x = 1\n")
    result = run_cli(["predict", f"{sample}:1:1"], tmp_path, data_dir, also_block=["gguf"])
    assert result.returncode == 1
    assert "the model failed to load" in result.stderr and "pip install gguf" in result.stderr
    assert "Traceback" not in result.stderr
