"""The learned gate of ghost text: where to cut the plain continuation, or whether to
show it at all. A logistic regression over ghost_features.FEATURES gives each cut
point the probability that it is right; the longest cut at or above the gate's
threshold is shown. Fitted by `python -m training.ghost_gate` on the training split's
cases, judged by the evaluation's criterion, for one model and adapter: the file names
them, and any other model falls back to the token threshold alone.

Decoding stops before the first token below `decode_floor` (a cut past such a token is
never shown, so it is not decoded); the token after the last decoded one is then only
known to be below the floor, so `next_logp` is clipped there in fitting and use alike.

In a comment or a string (a docstring, a message) the gate must be sure: a cut there
is shown only at `prose_threshold`, chosen like the threshold but on those cuts alone;
prose is where a plausible continuation is most often not the user's."""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import logistic
from ..logistic import GateFileError
from ..token_confidence import TokenTrace
from .ghost_features import FEATURES, Cut, Surroundings, cuts, features

log = logging.getLogger(__name__)

GATE_VERSION = 2
ADAPTERS_DIR = Path(__file__).resolve().parents[2] / "adapters"
SHIPPED_GATE = ADAPTERS_DIR / "shadowtab-next-edit.ghost-gate.json"
_NEXT = FEATURES.index("next_logp")


@dataclass(frozen=True)
class FittedFor:
    """The weights a gate's probabilities were measured on: the base model file's name
    and the adapter file's name and SHA-256 (None: no adapter)."""

    base_model: str
    adapter: str | None
    adapter_sha256: str | None

    def matches(self, model_path: str, adapter_path: str | None) -> bool:
        """The engine's loaded model (a converted or merged copy keeps the base file's
        stem at the front of its name) and adapter."""
        stem = self.base_model.removesuffix(".gguf")
        if not Path(model_path).name.startswith(stem):
            return False
        if self.adapter is None or adapter_path is None:
            return self.adapter is None and adapter_path is None
        return Path(adapter_path).name == self.adapter and file_sha256(adapter_path) == (
            self.adapter_sha256
        )


@dataclass(frozen=True)
class GhostGate:
    fitted_for: FittedFor
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float
    decode_floor: float
    prose_threshold: float  # in a comment or a string

    def probability(self, values: Sequence[float]) -> float:
        """The chance that a cut with these FEATURES values is right."""
        return logistic.probability(values, self.weights, self.bias, self.mean, self.scale)

    def choose(
        self, generated: str, trace: TokenTrace, rest: str, finished: bool, around: Surroundings
    ) -> tuple[Cut, float] | None:
        """The longest cut the gate passes, with its probability; None: show nothing."""
        needed = self.threshold_at(around)
        best = None
        for cut in decodable(cuts(generated, trace, rest, finished), trace, self.decode_floor):
            p = self.probability(clipped(features(cut, trace, finished, around), self.decode_floor))
            if p >= needed:
                best = (cut, p)
        return best

    def threshold_at(self, around: Surroundings) -> float:
        """The probability a cut at this cursor must reach."""
        return self.threshold if around.region == "code" else self.prose_threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": GATE_VERSION,
            "features": list(FEATURES),
            "fitted_for": vars(self.fitted_for),
            **logistic.regression_dict(self.weights, self.bias, self.mean, self.scale),
            "threshold": self.threshold,
            "decode_floor": self.decode_floor,
            "prose_threshold": self.prose_threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GhostGate:
        logistic.check_fitted_on(data, GATE_VERSION, FEATURES)
        weights, bias, mean, scale = logistic.regression_of(data, len(FEATURES))
        try:
            gate = cls(
                FittedFor(**data["fitted_for"]),
                weights,
                bias,
                mean,
                scale,
                float(data["threshold"]),
                float(data["decode_floor"]),
                float(data["prose_threshold"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GateFileError(f"a malformed gate file: {exc}") from exc
        if not 0.0 < gate.decode_floor < 1.0:
            raise GateFileError("a malformed gate file: decode_floor out of range")
        if not 0.0 < gate.threshold <= gate.prose_threshold <= 1.0:
            raise GateFileError("a malformed gate file: thresholds out of range")
        return gate

    @classmethod
    def load(cls, path: Path) -> GhostGate:
        return cls.from_dict(logistic.read_gate_file(path))


def clipped(values: list[float], floor: float) -> list[float]:
    """`next_logp` as decoding to `floor` knows it: a token below the floor is not
    decoded, so only "below the floor" is known of it."""
    values[_NEXT] = max(values[_NEXT], math.log(max(floor, 1e-9)))
    return values


def decodable(found: list[Cut], trace: TokenTrace, floor: float) -> list[Cut]:
    """The cuts before the first token below the floor (decoding stops there)."""
    limit = next((i for i, p in enumerate(trace.probs) if p < floor), len(trace.probs))
    return [cut for cut in found if cut.tokens <= limit]


_SHA_CACHE: dict[tuple[str, float, int], str] = {}


def file_sha256(path: str) -> str | None:
    """The file's SHA-256, remembered by path, mtime and size (an adapter is ~10 MB)."""
    try:
        stat = Path(path).stat()
        key = (path, stat.st_mtime, stat.st_size)
        if key not in _SHA_CACHE:
            _SHA_CACHE[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return _SHA_CACHE[key]
    except OSError:
        return None


def gate_for(stats: Mapping[str, Any], path: Path = SHIPPED_GATE) -> tuple[GhostGate | None, str]:
    """The gate for the engine `stats` describe (Engine.stats()), and why (for `daemon
    status`): None when the file is missing or malformed, the model is another, or the
    engine reports no token probabilities (a server)."""
    try:
        gate = GhostGate.load(path)
    except GateFileError as exc:
        log.warning("ghost-text gate not used: %s", exc)
        return None, f"off ({exc})"
    model = str(stats.get("model") or "")
    adapter = stats.get("adapter")
    if not gate.fitted_for.matches(model, str(adapter) if adapter else None):
        log.info("ghost-text gate not used: fitted for %s, not this model", gate.fitted_for)
        return None, "off (fitted for another model or adapter: the token threshold alone)"
    return gate, (
        f"on (threshold {gate.threshold:.2f}; {gate.prose_threshold:.2f} in comments and strings)"
    )
