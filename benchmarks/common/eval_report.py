"""The evaluation's figures: one JSON line per mode and source, and the precision /
recall curve over confidence thresholds."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from training.edit_scoring import Verdict

TARGET_PRECISION = 0.8
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(20))


@dataclass(frozen=True)
class Suggestion:
    verdict: Verdict
    confidence: float | None
    source: str | None
    edit: tuple[int, int, str] = (0, 0, "")  # start, end, new text in the case's current text


@dataclass
class Observation:
    """What one source offered in one case, best first."""

    suggestions: list[Suggestion]
    seconds: float
    reuse: tuple[int, int] | None  # (prompt tokens, of them reused) during the request
    error: str | None = None
    direct: bool = False  # computed in-process, not asked of the server
    remaining: int | None = None  # line mode: characters of the line left to write


def mode_lines(
    mode: str, observed: dict[str, list[Observation]], header: dict[str, Any]
) -> list[dict[str, Any]]:
    return [_line(mode, source, found, header) for source, found in observed.items()]


def _line(
    mode: str, source: str, found: Sequence[Observation], header: dict[str, Any]
) -> dict[str, Any]:
    best = [o.suggestions[0].verdict for o in found if o.suggestions]
    correct = sum(v.correct for v in best)
    strict = sum(v.strict for v in best)
    milliseconds = sorted(o.seconds * 1000 for o in found)
    prompt = sum(o.reuse[0] for o in found if o.reuse)
    reused = sum(o.reuse[1] for o in found if o.reuse)
    line = {
        "benchmark": "next_edit_eval",
        "mode": mode,
        "source": source,
        "cases": len(found),
        "shown": len(best),
        "correct": correct,
        "exact": sum(v.exact for v in best),
        "strict": strict,  # correct and contiguous with an exact text (edit_scoring.py)
        "precision": round(correct / len(best), 3) if best else None,
        "strict_precision": round(strict / len(best), 3) if best else None,
        "recall": round(correct / len(found), 3) if found else None,
        "chars_saved": sum(v.chars_saved for v in best),
        "latency_p50_ms": quantile(milliseconds, 0.5),
        "latency_p90_ms": quantile(milliseconds, 0.9),
        "prompt_reuse": round(reused / prompt, 3) if prompt else None,
        "errors": sum(o.error is not None for o in found),
        **header,
    }
    remaining = sum(o.remaining for o in found if o.remaining is not None)
    if remaining:  # line mode: the share of the lines' remaining characters saved
        line["chars_remaining"] = remaining
        line["chars_saved_share"] = round(line["chars_saved"] / remaining, 3)
    if any(o.direct for o in found):
        line["computed"] = "in-process, not from the server's answers"
    return line


def sweep_line(
    mode: str, source: str, found: Sequence[Observation], header: dict[str, Any]
) -> dict[str, Any] | None:
    """Precision and recall of the best suggestion at or above each threshold; None when
    the source's suggestions carry no confidence."""
    if not any(s.confidence is not None for o in found for s in o.suggestions):
        return None
    curve = []
    for threshold in THRESHOLDS:
        best = [_first_above(o.suggestions, threshold) for o in found]
        shown = [s for s in best if s is not None]
        correct = sum(s.verdict.correct for s in shown)
        precision = correct / len(shown) if shown else None
        curve.append(
            {
                "threshold": threshold,
                "shown": len(shown),
                "correct": correct,
                "precision": round(precision, 3) if precision is not None else None,
                "recall": round(correct / len(found), 3) if found else None,
            }
        )
    chosen = next(
        (
            p["threshold"]
            for p in curve
            if p["precision"] is not None and p["precision"] >= TARGET_PRECISION
        ),
        None,
    )
    return {
        "benchmark": "next_edit_eval_sweep",
        "mode": mode,
        "source": source,
        "cases": len(found),
        "curve": curve,
        "threshold_for_precision_0.8": chosen,
        **header,
    }


def _first_above(suggestions: Sequence[Suggestion], threshold: float) -> Suggestion | None:
    for suggestion in suggestions:
        if suggestion.confidence is not None and suggestion.confidence >= threshold:
            return suggestion
    return None


def quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1], 1)
