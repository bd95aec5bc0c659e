"""Propagation's learned gate: the chance that repeating a finished edit at one place is
what the user will do there, from propagation_features.FEATURES; places below the
gate's threshold are not offered. No model is involved, so the gate fits any engine.

Fitted by `python -m training.propagation_gate --write` on the training split's
next-hunk cases, judged by the evaluation's criterion; without its file (or with one
fitted on other features) propagation falls back to its fixed confidences
(propagation.CONFIDENCE_BY_INTENT), with a log line."""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import logistic
from ..logistic import GateFileError
from .propagation_features import FEATURES

log = logging.getLogger(__name__)

GATE_VERSION = 1
SHIPPED_GATE = Path(__file__).resolve().parent / "propagation_gate.json"


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
            **logistic.regression_dict(self.weights, self.bias, self.mean, self.scale),
            "threshold": self.threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PropagationGate:
        logistic.check_fitted_on(data, GATE_VERSION, FEATURES)
        weights, bias, mean, scale = logistic.regression_of(data, len(FEATURES))
        try:
            threshold = float(data["threshold"])
        except (KeyError, TypeError, ValueError) as exc:
            raise GateFileError(f"a malformed gate file: {exc}") from exc
        if not 0.0 < threshold <= 1.0:
            raise GateFileError("a malformed gate file: threshold out of range")
        return cls(weights, bias, mean, scale, threshold)

    @classmethod
    def load(cls, path: Path) -> PropagationGate:
        return cls.from_dict(logistic.read_gate_file(path))


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
