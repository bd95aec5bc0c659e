"""Propagation's learned gate: the chance that repeating a finished edit at one place is
what the user will do there, from propagation_features.FEATURES; places below the
gate's threshold are not offered. No model is involved, so the gate fits any engine.

Fitted by `python -m training.propagation_gate --write` on the training split's
next-hunk cases, judged by the evaluation's criterion; without its file (or with one
fitted on other features) propagation falls back to its fixed confidences
(propagation.CONFIDENCE_BY_INTENT), with a log line."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import logistic
from .propagation_features import FEATURES

log = logging.getLogger(__name__)

GATE_VERSION = 1
SHIPPED_GATE = Path(__file__).resolve().parent / "propagation_gate.json"


class GateFileError(ValueError):
    """A gate file that cannot be used (unreadable, another version or feature list)."""


@dataclass(frozen=True)
class PropagationGate:
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float

    def probability(self, values: Sequence[float]) -> float:
        """The chance that the place with these FEATURES values is right."""
        return logistic.probability(values, self.weights, self.bias, self.mean, self.scale)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": GATE_VERSION,
            "features": list(FEATURES),
            "weights": list(self.weights),
            "bias": self.bias,
            "mean": list(self.mean),
            "scale": list(self.scale),
            "threshold": self.threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PropagationGate:
        if data.get("version") != GATE_VERSION:
            raise GateFileError(f"gate version {data.get('version')!r}, not {GATE_VERSION}")
        if tuple(data.get("features", ())) != FEATURES:
            raise GateFileError("the gate was fitted on other features")
        try:
            size = len(FEATURES)
            gate = cls(
                _floats(data["weights"], size),
                float(data["bias"]),
                _floats(data["mean"], size),
                _floats(data["scale"], size),
                float(data["threshold"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GateFileError(f"a malformed gate file: {exc}") from exc
        if any(s <= 0 for s in gate.scale) or not 0.0 < gate.threshold <= 1.0:
            raise GateFileError("a malformed gate file: scale or threshold out of range")
        return gate

    @classmethod
    def load(cls, path: Path) -> PropagationGate:
        try:
            return cls.from_dict(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise GateFileError(f"cannot read the gate file {path}: {exc}") from exc


def _floats(values: Any, size: int) -> tuple[float, ...]:
    found = tuple(float(v) for v in values)
    if len(found) != size:
        raise ValueError(f"{len(found)} values, not {size}")
    return found


@functools.cache
def gate_at(path: Path = SHIPPED_GATE) -> tuple[PropagationGate | None, str]:
    """The gate in `path` (read once), and `daemon status`'s line for it; None when the
    file cannot be used (then propagation keeps its fixed confidences)."""
    try:
        gate = PropagationGate.load(path)
    except GateFileError as exc:
        log.warning("propagation gate not used: %s", exc)
        return None, f"gate off ({exc}): fixed confidences"
    return gate, f"gate on (threshold {gate.threshold:.2f})"
