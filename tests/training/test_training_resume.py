"""Training survives interruptions: a run killed mid-step resumes from its last
checkpoint; a checkpoint of another mode, base or shape is refused and left as it was.
On a tiny random model of the packaged model's family (the mechanics, not the
learning, are under test: the real model would cost minutes per run here)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from training_support import needs_train_extra

pytestmark = needs_train_extra
REPO = Path(__file__).resolve().parents[2]


def write_data(folder: Path, count: int = 24) -> Path:
    rng = random.Random(0)
    for name, rows in (("train", count), ("heldback", 4)):
        with (folder / f"{name}.jsonl").open("w") as out:
            for _ in range(rows):
                prompt = [rng.randrange(3, 49152) for _ in range(rng.randint(8, 24))]
                answer = [rng.randrange(3, 49152) for _ in range(rng.randint(2, 6))] + [2]
                example = {"kind": "typing", "prompt_ids": prompt, "answer_ids": answer}
                out.write(json.dumps(example) + "\n")
    return folder


def train_argv(tmp: Path, *extra: str) -> list[str]:
    return [
        "--base", "tiny-random", "--data", str(tmp), "--checkpoints", str(tmp / "ck"),
        "--log", str(tmp / "train.log"), "--batch-size", "2", "--eval-examples", "2",
        "--eval-every", "1000", "--precision", "fp32", "--no-commit", "--threads", "1",
        *extra,
    ]  # fmt: skip


def log_rows(tmp: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp / "train.log").read_text().splitlines()]


def saved_step(tmp: Path) -> int:
    import torch

    path = tmp / "ck" / "adapter-latest.pt"
    return int(torch.load(path, map_location="cpu", weights_only=False)["step"])


@pytest.mark.timeout(600)
def test_a_run_killed_mid_step_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    write_data(tmp_path)
    # a checkpoint after every step (the interval is time-based: 0 minutes)
    argv = train_argv(tmp_path, "--mode", "full", "--checkpoint-minutes", "0")
    command = [sys.executable, "-m", "training.train", *argv]
    run = subprocess.Popen([*command, "--max-steps", "100000"], cwd=REPO)
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and run.poll() is None:
            log = tmp_path / "train.log"
            if log.exists() and sum('"checkpoint"' in line for line in log.open()) >= 3:
                break
            time.sleep(0.2)
        assert run.poll() is None, "the run ended before it was killed"
        os.kill(run.pid, signal.SIGKILL)  # no handler runs: mid-step or mid-write
    finally:
        run.kill()
        run.wait(30)
    # killed mid-write, a half-written temp may be left beside the checkpoint; it never
    # replaces it: the checkpoint still loads, at a step the log says was saved
    killed_at = saved_step(tmp_path)
    assert killed_at >= 3
    saved = [row["step"] for row in log_rows(tmp_path) if row.get("event") == "checkpoint"]
    # the kill may fall between the checkpoint's rename and its log line
    assert saved and killed_at in (saved[-1], saved[-1] + 1)
    done = subprocess.run(
        [*command, "--max-steps", str(killed_at + 2)], cwd=REPO, timeout=400, check=False
    )
    assert done.returncode == 0
    rows = log_rows(tmp_path)
    resumed = [row for row in rows if row.get("event") == "resumed"]
    assert [row["step"] for row in resumed] == [killed_at]
    after = rows[rows.index(resumed[0]) :]
    assert [row["step"] for row in after if "loss" in row] == [killed_at + 1, killed_at + 2]
    assert saved_step(tmp_path) == killed_at + 2
    assert not list((tmp_path / "ck").glob("*.tmp"))  # the resumed run's saves replaced it


def test_resume_restores_the_saved_weights(tmp_path: Path) -> None:
    import torch

    from training import train

    write_data(tmp_path)
    argv = train_argv(tmp_path, "--mode", "full", "--max-steps", "2", "--lr", "1e-2")
    first = train.Trainer(train.parse_args(argv))
    first.run()
    trained = {n: p.detach().clone() for n, p in first.model.named_parameters()}
    second = train.Trainer(train.parse_args(argv))
    untrained = dict(second.model.named_parameters())
    name = "model.layers.0.mlp.down_proj.weight"
    assert not torch.equal(untrained[name], trained[name])  # training moved it
    second.resume()
    assert second.step == 2 and second.rewarm_from is None  # tiny: Adam state fits
    for key, value in second.model.named_parameters():
        # int8 change per row: within half a step of the row's largest change
        step = (trained[key] - first.base_weights.get(key, trained[key])).abs().max() / 127
        assert (value - trained[key]).abs().max() <= step / 2 + 1e-7, key


@pytest.mark.parametrize(
    ("change", "refused_for"),
    [
        (["--mode", "lora", "--rank", "8", "--alpha", "16"], "shape"),
        (["--mode", "full"], "mode"),
        ("base", "base"),
    ],
)
def test_a_checkpoint_of_another_shape_or_base_is_refused_and_kept(
    tmp_path: Path, change: list[str] | str, refused_for: str
) -> None:
    import torch

    from training import train

    write_data(tmp_path)
    lora = ["--mode", "lora", "--rank", "4", "--alpha", "8"]
    train.Trainer(train.parse_args(train_argv(tmp_path, *lora, "--max-steps", "1"))).run()
    path = tmp_path / "ck" / "adapter-latest.pt"
    if change == "base":  # as if trained from another model
        payload = torch.load(path, map_location="cpu", weights_only=False)
        torch.save({**payload, "base": "another-model.gguf:123"}, path)
        change = lora
    before = (path.read_bytes(), path.stat().st_mtime_ns, (tmp_path / "train.log").read_text())
    trainer = train.Trainer(train.parse_args(train_argv(tmp_path, *change, "--max-steps", "3")))
    with pytest.raises(SystemExit, match=f"has {refused_for} .*nothing was written"):
        trainer.run()
    after = (path.read_bytes(), path.stat().st_mtime_ns, (tmp_path / "train.log").read_text())
    assert after == before


def test_a_full_checkpoint_comes_back_in_small_pieces_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GPU machine returns files of at most 16 MiB: transport.py splits the change
    (4 bits) and puts it back together as a checkpoint training resumes from."""
    import torch

    from training import train, transport

    write_data(tmp_path)
    argv = train_argv(tmp_path, "--mode", "full", "--max-steps", "2", "--lr", "1e-2")
    first = train.Trainer(train.parse_args(argv))
    first.run()
    monkeypatch.setattr(transport, "PIECE_BYTES", 4096)  # several pieces from a tiny model
    pieces = transport.pack(tmp_path / "ck" / "adapter-latest.pt", tmp_path / "returned")
    assert len(pieces) > 1 and all(p.stat().st_size <= 4096 for p in pieces)
    back = tmp_path / "back" / "ck" / "adapter-latest.pt"
    transport.unpack(tmp_path / "returned", back)
    second = train.Trainer(train.parse_args([*argv, "--checkpoints", str(back.parent)]))
    second.resume()
    assert second.step == 2 and second.rewarm_from == 2  # no Adam state travels
    trained = dict(first.model.named_parameters())
    for name, value in second.model.named_parameters():
        change = (trained[name] - first.base_weights[name]) if name in first.base_weights else None
        if change is None:
            assert torch.equal(value, trained[name]), name
            continue
        bound = float(change.abs().max()) / 7 / 2 + float(change.abs().max()) / 127 + 1e-6
        assert (value - trained[name]).abs().max() <= bound, name
