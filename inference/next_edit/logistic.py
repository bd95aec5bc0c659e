"""The learned gates' logistic regression: its probability, and the parts of a gate file
every gate shares (a version, the feature list it was fitted on, the weights, the bias and
each feature's mean and scale). training/logistic.py fits them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Regression = tuple[tuple[float, ...], float, tuple[float, ...], tuple[float, ...]]


class GateFileError(ValueError):
    """A gate file that cannot be used (unreadable, another version or feature list)."""


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


def read_gate_file(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GateFileError(f"cannot read the gate file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise GateFileError(f"the gate file {path} holds no object")
    return data


def check_fitted_on(data: Mapping[str, Any], version: int, features: Sequence[str]) -> None:
    """GateFileError unless the file is `version`, fitted on `features` in this order."""
    if data.get("version") != version:
        raise GateFileError(f"gate version {data.get('version')!r}, not {version}")
    if tuple(data.get("features", ())) != tuple(features):
        raise GateFileError("the gate was fitted on other features")


def regression_of(data: Mapping[str, Any], size: int) -> Regression:
    """(weights, bias, mean, scale) of a gate file over `size` features."""
    try:
        found = (
            _floats(data["weights"], size),
            float(data["bias"]),
            _floats(data["mean"], size),
            _floats(data["scale"], size),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise GateFileError(f"a malformed gate file: {exc}") from exc
    if any(s <= 0 for s in found[3]):
        raise GateFileError("a malformed gate file: a scale out of range")
    return found


def regression_dict(
    weights: Sequence[float], bias: float, mean: Sequence[float], scale: Sequence[float]
) -> dict[str, Any]:
    return {"weights": list(weights), "bias": bias, "mean": list(mean), "scale": list(scale)}


def _floats(values: Any, size: int) -> tuple[float, ...]:
    found = tuple(float(v) for v in values)
    if len(found) != size:
        raise ValueError(f"{len(found)} values, not {size}")
    return found
