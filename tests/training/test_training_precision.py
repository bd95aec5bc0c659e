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
    def never(model: Any, name: str, tokens: int) -> float:
        raise AssertionError("measured although a precision was asked for")

    assert precision.choose(TinyLm(), "fp32", never) == ("fp32", {})
    assert precision.choose(TinyLm(), "bf16", never) == ("bf16", {})


# (short step fp32, bf16), (long step fp32, bf16): the long step decides unless the
# short one shows the scalar fallback (measured: 0.37/0.85 s short, 7.3/3.6 s long -> bf16)
@pytest.mark.parametrize(
    ("short", "long", "chosen"),
    [
        ((0.37, 0.85), (7.3, 3.6), "bf16"),
        ((0.3, 0.2), (1.0, 1.4), "fp32"),
    ],
)
def test_auto_trains_in_the_faster_on_a_training_sized_step(
    short: tuple[float, float], long: tuple[float, float], chosen: str
) -> None:
    def timer(model: Any, name: str, tokens: int) -> float:
        pair = long if tokens == precision.PROBE_TOKENS else short
        return pair[0] if name == "fp32" else pair[1]

    found, timings = precision.choose(TinyLm(), "auto", timer)
    assert found == chosen and timings["bf16"] == long[1] and timings["fp32_short"] == short[0]


def test_the_scalar_bf16_fallback_is_caught_by_the_short_step_alone() -> None:
    asked: list[int] = []

    def timer(model: Any, name: str, tokens: int) -> float:
        asked.append(tokens)
        return 7.7 if name == "bf16" else 0.6  # an AVX2-only CPU: bf16 13x slower

    assert precision.choose(TinyLm(), "auto", timer)[0] == "fp32"
    assert set(asked) == {precision.SHORT_PROBE_TOKENS}  # the long step would take minutes


def test_the_probe_times_a_real_step_and_leaves_no_gradient() -> None:
    model = TinyLm()
    for name in ("fp32", "bf16"):
        assert precision.step_seconds(model, name, tokens=8) > 0
    assert all(p.grad is None for p in model.parameters())
    chosen, timings = precision.choose(model, "auto")
    assert chosen in ("fp32", "bf16") and {"fp32_short", "bf16_short"} <= set(timings)


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of"):
        precision.choose(TinyLm(), "fp16")
