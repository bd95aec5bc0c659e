"""The rebuild command runs end to end in reduced size: mine, train, export, evaluate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from training_support import needs_train_extra

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"

pytestmark = [
    needs_train_extra,
    pytest.mark.skipif(
        not (CORPUS / "edits-train.jsonl").exists(), reason=f"no edit corpus at {CORPUS}"
    ),
]


@pytest.mark.timeout(1800)
def test_quick_build(tmp_path: Path) -> None:
    out = tmp_path / "build"
    done = subprocess.run(
        [sys.executable, "-m", "training.build", "--out", str(out), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) >= {"base", "adapter", "adapter_latency_ratio", "examples"}
    assert (out / "shadowtab-next-edit.lora.gguf").stat().st_size > 0
    assert (out / "checkpoints" / "adapter-latest.pt").exists()
    log = [json.loads(line) for line in (out / "train.log").read_text().splitlines()]
    assert any("eval_loss" in row for row in log)
    assert [row["step"] for row in log if "loss" in row] == [1, 2]
