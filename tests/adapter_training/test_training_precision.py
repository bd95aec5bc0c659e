"""The training precision: asked for, or the faster of two timed steps on the model."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from training import precision


class TinyLm(torch.nn.Module):
    """A causal-LM-shaped model (input_ids, labels -> .loss) small enough for a unit test."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(64, 16)
        self.head = torch.nn.Linear(16, 64)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor) -> Any:
        logits = self.head(self.embed(input_ids))
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
        return type("Out", (), {"loss": loss})()


def test_an_asked_precision_is_not_measured() -> None:
    def never(model: Any, name: str) -> float:
        raise AssertionError("measured although a precision was asked for")

    assert precision.choose(TinyLm(), "fp32", never) == ("fp32", {})
    assert precision.choose(TinyLm(), "bf16", never) == ("bf16", {})


@pytest.mark.parametrize(("fp32_s", "bf16_s", "chosen"), [(1.0, 0.6, "bf16"), (0.2, 7.7, "fp32")])
def test_auto_trains_in_the_faster(fp32_s: float, bf16_s: float, chosen: str) -> None:
    timings = {"fp32": fp32_s, "bf16": bf16_s}
    assert precision.choose(TinyLm(), "auto", lambda m, name: timings[name]) == (chosen, timings)


def test_the_probe_times_a_real_step_and_leaves_no_gradient() -> None:
    model = TinyLm()
    for name in ("fp32", "bf16"):
        assert precision.step_seconds(model, name, tokens=8) > 0
    assert all(p.grad is None for p in model.parameters())
    chosen, timings = precision.choose(model, "auto")
    assert chosen in ("fp32", "bf16") and set(timings) == {"fp32", "bf16"}


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of"):
        precision.choose(TinyLm(), "fp16")
