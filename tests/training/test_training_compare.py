"""The equal-time comparison (training/compare.py): the time budget stops training, the
full-weight contender trains every weight but the embedding, and the scores mean what
they say. On a tiny random model of the packaged model's family."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from test_training_resume import write_data
from training_support import needs_train_extra

pytestmark = needs_train_extra


def tiny_trainer(tmp: Path, name: str) -> Any:
    from training import compare

    return compare.trainer_for(name, write_data(tmp), 1, "fp32", "tiny-random")


@pytest.mark.timeout(300)
def test_the_time_budget_stops_training(tmp_path: Path) -> None:
    from training import compare

    trainer = tiny_trainer(tmp_path, "lora8")
    ticks = itertools.count()  # each look at the clock is one second later
    row = compare.train_for(trainer, 3.0, clock=lambda: float(next(ticks)))
    # clock read at the start (0), then before each step (1, 2, 3: stop), then once more
    assert row["steps"] == trainer.step == 2
    assert row["tokens"] == trainer.tokens_seen > 0
    assert row["train_s"] == 4.0


@pytest.mark.timeout(300)
def test_the_full_contender_trains_every_weight_but_the_embedding(tmp_path: Path) -> None:
    import torch

    from training import compare

    trainer = tiny_trainer(tmp_path, "full")
    named = dict(trainer.model.named_parameters())
    trained = {name for name, p in named.items() if p.requires_grad}
    assert trained == {name for name in named if "embed_tokens" not in name}
    before = {name: named[name].detach().clone() for name in trained}
    compare.train_for(trainer, 1e9, clock=iter([0.0, 0.0, 1e10, 1e10]).__next__)
    moved = {name for name in trained if not torch.equal(before[name], named[name])}
    assert moved == trained
    lora = tiny_trainer(tmp_path, "lora64")
    lora_trained = [n for n, p in lora.model.named_parameters() if p.requires_grad]
    assert lora_trained and all("lora_" in name for name in lora_trained)


@pytest.mark.timeout(300)
def test_exact_means_greedy_decoding_gives_the_answer(tmp_path: Path) -> None:
    import torch

    from training import compare
    from training.train import answer_loss

    model = tiny_trainer(tmp_path, "full").model.eval()
    prompt = [5, 17, 300, 41, 9]
    with torch.no_grad():
        greedy = model.generate(
            input_ids=torch.tensor([prompt]), max_new_tokens=4, do_sample=False, pad_token_id=2
        )[0, len(prompt) :].tolist()
    right = {"kind": "done", "prompt_ids": prompt, "answer_ids": greedy}
    wrong = {"kind": "untouched", "prompt_ids": prompt, "answer_ids": [*greedy[:3], greedy[3] + 1]}
    scores = compare.answer_scores(model, [right, wrong], "fp32")
    assert scores["done"]["exact"] == 1.0 and scores["untouched"]["exact"] == 0.0
    assert scores["all"] == {
        "n": 2,
        "loss": pytest.approx(answer_loss(model, [right, wrong], 1, "fp32"), abs=1e-3),
        "exact": 0.5,
    }


def test_copied_lines_counts_only_the_lines_the_commit_leaves_alone() -> None:
    from training.compare import copied_lines

    before = "a\nb\nc\nd\n"
    expected = "a\nB\nc\nd\n"  # b changes: a, c, d are unchanged
    assert copied_lines(before, expected, expected) == (3, 3)
    assert copied_lines(before, expected, "a\nb\nc\nd\n") == (3, 3)  # change missed, copy right
    assert copied_lines(before, expected, "a\nB\nC\n") == (1, 3)  # c rewritten, d dropped
