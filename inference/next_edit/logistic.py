"""A standardized logistic regression's probability, as the learned gates use it (their
files hold the weights, the bias and each feature's mean and scale; training/logistic.py
fits them)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def probability(
    values: Sequence[float],
    weights: Sequence[float],
    bias: float,
    mean: Sequence[float],
    scale: Sequence[float],
) -> float:
    """sigmoid(bias + sum(weight * (value - mean) / scale))."""
    z = bias
    for value, weight, m, s in zip(values, weights, mean, scale, strict=True):
        z += weight * (value - m) / s
    return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))
