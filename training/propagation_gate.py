"""Fit propagation's learned gate (inference/next_edit/propagation/propagation_gate.py): a logistic
regression over the features of every place a finished edit would be repeated at
(propagation_features.FEATURES), labelled by the evaluation's criterion on next-hunk
cases (the first hunk of a commit done: is the same change at that place on the way to
the commit's text?). No model runs, so collecting takes seconds.

    python -m training.propagation_gate [--corpus DIR] [--write]

The threshold is the lowest whose precision reaches TARGET_PRECISION on out-of-fold
predictions of the training cases (five folds by case), where a case shows the first
place the gate passes, as propagation offers them (nearest first): the held-back split
is left to report on. Prints the curve it came from, then each split's gate against the
fixed confidences, one JSON line each. `--write` saves the gate where the package ships
it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from shadowtab.inference.next_edit.propagation.propagation import CompletedEdit, places
from shadowtab.inference.next_edit.propagation.propagation_gate import (
    SHIPPED_GATE,
    PropagationGate,
)

from training import logistic
from training.corpus import DEFAULT_CORPUS, Split, records
from training.edit_scoring import apply_edit, judge
from training.eval_cases import cases

TARGET_PRECISION = 0.85
MIN_SHOWN = 20  # a threshold is chosen only where this many cases show a place
THRESHOLDS = tuple(round(0.3 + 0.025 * i, 3) for i in range(27))
FOLDS = 5
PLACES_PER_CASE = 20  # as many as the predictor could ask for


@dataclass(frozen=True)
class Row:
    """One place offered in case number `case`, in propagation's order."""

    case: int
    values: tuple[float, ...]
    correct: bool
    chars_saved: int
    fixed_confidence: float  # propagation's confidence without a gate


def collect(corpus: Path, split: Split) -> tuple[list[Row], int]:
    """Every place of every next-hunk case of `split`, and the number of cases."""
    rows: list[Row] = []
    found = cases(records(corpus, split), "next_hunk", 10**9)
    for number, case in enumerate(found):
        edit = CompletedEdit.from_texts(case.path, case.opened, case.current)
        for place in places(edit, {case.path: case.current}, PLACES_PER_CASE):
            e = place.candidate.edit
            applied = apply_edit(case.current, e.start, e.end, e.new_text)
            verdict = judge(
                case.current, applied, case.target, case.exact_texts, e.start + len(e.new_text)
            )
            rows.append(
                Row(
                    number,
                    place.values,
                    verdict.correct,
                    verdict.chars_saved,
                    place.candidate.confidence,
                )
            )
    return rows, len(found)


def shown(rows: Sequence[Row], scores: Sequence[float], threshold: float) -> dict[int, Row]:
    """Per case, the first place whose score passes."""
    first: dict[int, Row] = {}
    for row, score in zip(rows, scores, strict=True):
        if score >= threshold and row.case not in first:
            first[row.case] = row
    return first


def tally(chosen: dict[int, Row], n_cases: int) -> dict[str, Any]:
    right = sum(row.correct for row in chosen.values())
    return {
        "cases": n_cases,
        "shown": len(chosen),
        "correct": right,
        "precision": round(right / len(chosen), 3) if chosen else None,
        "recall": round(right / n_cases, 3) if n_cases else None,
        "chars_saved": sum(row.chars_saved for row in chosen.values() if row.correct),
    }


def curve(rows: Sequence[Row], scores: Sequence[float], n_cases: int) -> list[dict[str, Any]]:
    return [{"threshold": t, **tally(shown(rows, scores, t), n_cases)} for t in THRESHOLDS]


def chosen_threshold(points: list[dict[str, Any]]) -> float | None:
    for point in points:
        precision = point["precision"]
        if precision is not None and precision >= TARGET_PRECISION and point["shown"] >= MIN_SHOWN:
            return float(point["threshold"])
    return None


def fitted(rows: Sequence[Row], threshold: float) -> PropagationGate:
    x = np.array([row.values for row in rows])
    y = np.array([row.correct for row in rows], dtype=np.float64)
    w, b, mean, scale = logistic.fit(x, y)
    return PropagationGate(
        tuple(float(v) for v in w),
        float(b),
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
        threshold,
    )


def report(gate: PropagationGate, rows: Sequence[Row], n_cases: int, split: str) -> dict[str, Any]:
    """The gate against the fixed confidences: every place offered, and those at the
    gate's threshold, on one split."""
    scores = [gate.probability(row.values) for row in rows]
    fixed = [row.fixed_confidence for row in rows]
    passed = shown(rows, scores, gate.threshold)
    return {
        "split": split,
        "mode": "next_hunk",
        "gate": {"threshold": gate.threshold, **tally(passed, n_cases)},
        "fixed_confidences": tally(shown(rows, fixed, 0.0), n_cases),
        "fixed_at_threshold": tally(shown(rows, fixed, gate.threshold), n_cases),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--write", action="store_true", help=f"save the gate as {SHIPPED_GATE}")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"propagation_gate: no corpus at {args.corpus} (--corpus)", file=sys.stderr)
        return 2
    train, n_train = collect(args.corpus, "train")
    if not any(row.correct for row in train) or all(row.correct for row in train):
        print("propagation_gate: the training cases give nothing to fit", file=sys.stderr)
        return 1
    x = np.array([row.values for row in train])
    y = np.array([row.correct for row in train], dtype=np.float64)
    fold = np.array([row.case % FOLDS for row in train])
    points = curve(train, list(logistic.out_of_fold(x, y, fold, FOLDS)), n_train)
    threshold = chosen_threshold(points)
    fit = {"fit": "out_of_fold", "split": "train", "chosen": threshold, "curve": points}
    print(json.dumps(fit))
    if threshold is None:
        print(f"propagation_gate: no threshold reaches {TARGET_PRECISION}", file=sys.stderr)
        return 1
    gate = fitted(train, threshold)
    print(json.dumps(report(gate, train, n_train, "train (in sample)")))
    reported: tuple[Split, ...] = ("heldout", "dev")
    for split in reported:
        rows, n_cases = collect(args.corpus, split)
        print(json.dumps(report(gate, rows, n_cases, split)))
    if args.write:
        SHIPPED_GATE.write_text(json.dumps(gate.to_dict(), indent=1) + "\n")
        print(f"propagation_gate: wrote {SHIPPED_GATE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
