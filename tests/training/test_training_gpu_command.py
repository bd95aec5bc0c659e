"""The GPU command's path (epochs over the whole split, pieces to send back) runs where
neither the `shadowtab` package nor llama.cpp is installed, as on a GPU machine; here
on the CPU with the tests' tiny model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_training_resume import write_data
from training_support import needs_train_extra

pytestmark = needs_train_extra
REPO = Path(__file__).resolve().parents[2]
AS_ON_A_GPU_MACHINE = (
    "import sys, runpy; sys.modules['shadowtab'] = None; sys.modules['llama_cpp'] = None;"
    "sys.argv = ['build', *sys.argv[1:]]; runpy.run_module('training.build', run_name='__main__')"
)


@pytest.mark.timeout(600)
def test_the_gpu_command_trains_epochs_and_returns_pieces_without_shadowtab(
    tmp_path: Path,
) -> None:
    from training import packed, train

    data = write_data(tmp_path, count=24)
    for name in ("train", "heldback"):  # the packed form that travels
        packed.write(data / f"{name}.npz", train.read_examples(data / f"{name}.jsonl"))
        (data / f"{name}.jsonl").unlink()
    argv = ["--device", "cpu", "--mode", "full", "--base", "tiny-random", "--epochs", "2"]
    argv += ["--batch-size", "4", "--data", str(data), "--out", str(tmp_path / "out")]
    argv += ["--return-dir", str(tmp_path / "returned")]
    done = subprocess.run(
        [sys.executable, "-c", AS_ON_A_GPU_MACHINE, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tok/s" in done.stdout and "checkpoint in pieces" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "out" / "train.log").read_text().splitlines()]
    assert [row["step"] for row in rows if "loss" in row] == list(range(1, 13))  # 2 x 24 / 4
    assert sorted(p.name for p in (tmp_path / "returned").iterdir()) == ["checkpoint.part00"]
