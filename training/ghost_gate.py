"""Fit ghost text's learned gate (inference/next_edit/ghost_text/ghost_gate.py): a logistic
regression over the features of every cut point of the plain continuation, labelled by
the evaluation's criterion (line mode: a non-empty prefix of the line's rest; typing
mode: on a shortest path to the commit's text).

    python -m benchmarks.ghost_gate_collect --split train ... --out DIR/train.jsonl
    python -m benchmarks.ghost_gate_collect --split heldout ... --out DIR/heldout.jsonl
    python -m training.ghost_gate --data DIR [DIR ...] [--write]  (train.jsonl of each)

The threshold is the lowest whose precision reaches TARGET_PRECISION on out-of-fold
predictions of the training cases (five folds by case): the held-back split is left to
report on, not to choose with. The threshold in comments and strings is chosen the same
way on those cases alone (a finer grid from the threshold up: the gate must be sure).
Prints the curves they came from, then the held-back split (and dev where collected)
against one threshold everywhere and the token threshold alone, one JSON line each.
`--write` saves the gate beside the packaged adapter it was fitted for.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from shadowtab.inference import Completion
from shadowtab.inference.engines.api import RequestStats
from shadowtab.inference.next_edit.ghost_text.ghost_features import (
    Surroundings,
    cuts,
    features,
    region_at,
)
from shadowtab.inference.next_edit.ghost_text.ghost_gate import (
    SHIPPED_GATE,
    FittedFor,
    GhostGate,
    clipped,
    decodable,
    file_sha256,
)
from shadowtab.inference.next_edit.ghost_text.rejoin import rest_of_line
from shadowtab.inference.next_edit.token_confidence import (
    DEFAULT_TOKEN_THRESHOLD,
    TokenTrace,
    trace_of,
)

from training import logistic
from training.corpus import DEFAULT_CORPUS, records
from training.edit_scoring import apply_edit, judge, judge_line
from training.eval_cases import Case, cases, line_rest
from training.logistic import fit
from training.project_cases import DEFAULT_MIRRORS, project_cases

TARGET_PRECISION = 0.85
FLOORS = (0.2, 0.3, 0.4, 0.5)
THRESHOLDS = tuple(round(0.4 + 0.025 * i, 3) for i in range(23))
PROSE_THRESHOLDS = tuple(round(0.5 + 0.005 * i, 3) for i in range(101))  # up to 1.0: never
FOLDS = 5
PATH_ROOT = "/tmp/st-eval/root/case"  # as benchmarks/common/in_process.py sends it


@dataclass
class Point:
    """One cut of one case: its features and verdict."""

    case: int
    values: list[float]
    correct: bool
    saved: int
    tokens: int
    prose: bool  # the cursor is in a comment or a string


@dataclass
class Collected:
    """One case's continuation and what it would take to get right."""

    case: Case
    trace: TokenTrace
    generated: str
    finished: bool
    remaining: int  # characters a perfect suggestion would save
    context: tuple[str, ...] = ()  # the project's snippets the prompt held

    @property
    def prose(self) -> bool:
        """The cursor is in a comment or a string (GhostGate.prose_threshold)."""
        case = self.case
        return region_at(case.current, case.cursor, f"{PATH_ROOT}/{case.path}") != "code"


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def collected(
    rows: Sequence[dict[str, Any]], corpus: Path, mirrors: Path = DEFAULT_MIRRORS
) -> list[Collected]:
    """The cases the rows were collected on, rebuilt from the corpus (each in its whole
    file at the commit's parent where the row was collected in its project)."""
    found = []
    by_split: dict[tuple[str, str], tuple[list[dict[str, Any]], list[Case]]] = {}
    for row in rows:
        key = (row["split"], row["mode"])
        if key not in by_split:
            count = 1 + max(r["index"] for r in rows if (r["split"], r["mode"]) == key)
            split_records = records(corpus, row["split"])
            by_split[key] = split_records, cases(split_records, row["mode"], count)
        trace = trace_of(_completion(row), 0)
        if trace is None or not row["text"]:
            continue
        split_records, split_cases = by_split[key]
        case = split_cases[row["index"]]
        if row.get("project"):
            case = _whole(case, split_records, mirrors)
        remaining = len(line_rest(case)) if case.mode == "line" else _remaining(case)
        finished = row["finish"] in ("eos", "stop")
        context = tuple(row.get("context", ()))
        found.append(Collected(case, trace, row["text"], finished, remaining, context))
    return found


def _whole(case: Case, split_records: Sequence[dict[str, Any]], mirrors: Path) -> Case:
    moved, _ = project_cases([case], split_records, mirrors)
    if not moved:
        raise SystemExit(
            f"ghost_gate: {case.repo}@{case.commit[:12]} was collected in its project, "
            f"which is not in {mirrors} (--mirrors)"
        )
    return moved[0].case


def _completion(row: dict[str, Any]) -> Completion:
    return Completion(
        [row["text"]],
        RequestStats(),
        logprobs=[[math.log(max(p, 1e-9)) for p in row["probs"]]],
        text_offsets=[row["offsets"]],
        token_margins=[row["margins"]],
    )


def _remaining(case: Case) -> int:
    """The distance from the case's text to the mode's whole edit (the hunk finished)."""
    text = case.exact_texts[0] if case.exact_texts else case.target
    return judge(case.current, text, text, case.exact_texts).chars_saved


def points(items: Sequence[Collected], floor: float) -> list[Point]:
    found = []
    for index, item in enumerate(items):
        case = item.case
        path = f"{PATH_ROOT}/{case.path}"
        around = Surroundings.of(case.current, case.cursor, path, {}, item.context)
        rest = rest_of_line(case.current, case.cursor)
        every = cuts(item.generated, item.trace, rest, item.finished)
        for cut in decodable(every, item.trace, floor):
            values = clipped(features(cut, item.trace, item.finished, around), floor)
            correct, saved = verdict(case, cut.text)
            found.append(Point(index, values, correct, saved, cut.tokens, around.region != "code"))
    return found


def verdict(case: Case, text: str) -> tuple[bool, int]:
    if case.mode == "line":
        v = judge_line(line_rest(case), case.cursor, case.cursor, case.cursor, text)
    else:
        applied = apply_edit(case.current, case.cursor, case.cursor, text)
        v = judge(case.current, applied, case.target, case.exact_texts)
    return v.correct, v.chars_saved


def out_of_fold(found: Sequence[Point]) -> npt.NDArray[np.float64]:
    x = np.array([p.values for p in found])
    y = np.array([p.correct for p in found], dtype=np.float64)
    fold = np.array([p.case % FOLDS for p in found])
    return logistic.out_of_fold(x, y, fold, FOLDS)


def decide(
    found: Sequence[Point],
    scores: Iterable[float],
    threshold: float,
    prose_threshold: float | None = None,
) -> dict[int, Point]:
    """Per case, the longest cut whose score passes (GhostGate.choose's rule; None:
    `threshold` in comments and strings too)."""
    chosen: dict[int, Point] = {}
    for point, score in zip(found, scores, strict=True):
        needed = prose_threshold if point.prose and prose_threshold is not None else threshold
        if score >= needed:
            chosen[point.case] = point  # cuts come shortest first
    return chosen


def tally(chosen: dict[int, Point], items: Sequence[Collected]) -> dict[str, Any]:
    shown = len(chosen)
    correct = sum(p.correct for p in chosen.values())
    saved = sum(p.saved for p in chosen.values() if p.correct)
    remaining = sum(item.remaining for item in items)
    return {
        "cases": len(items),
        "shown": shown,
        "correct": correct,
        "precision": round(correct / shown, 3) if shown else None,
        "recall": round(correct / len(items), 3) if items else None,
        "chars_saved_share": round(saved / remaining, 3) if remaining else None,
    }


def token_threshold_tally(items: Sequence[Collected], threshold: float) -> dict[str, Any]:
    """Today's rule on the same continuations: cut before the first token below it."""
    found = points(items, threshold)
    chosen: dict[int, Point] = {}
    for point in found:
        chosen[point.case] = point  # every decodable cut; the longest wins
    return tally(chosen, items)


def curve(
    found: Sequence[Point], scores: npt.NDArray[np.float64], items: Sequence[Collected]
) -> list[dict[str, Any]]:
    return [{"threshold": t, **tally(decide(found, scores, t), items)} for t in THRESHOLDS]


def prose_curve(
    found: Sequence[Point],
    scores: npt.NDArray[np.float64],
    items: Sequence[Collected],
    threshold: float,
) -> list[dict[str, Any]]:
    """The curve of the cases in comments and strings, from `threshold` up."""
    kept = [i for i, point in enumerate(found) if point.prose]
    prose_points = [found[i] for i in kept]
    prose_items = [item for item in items if item.prose]
    return [
        {"threshold": t, **tally(decide(prose_points, scores[kept], t), prose_items)}
        for t in PROSE_THRESHOLDS
        if t >= threshold
    ]


def chosen_prose_threshold(points_curve: list[dict[str, Any]]) -> float:
    """As chosen_threshold; 1.0 (nothing shown in prose) where none reaches it."""
    found = chosen_threshold(points_curve)
    return 1.0 if found is None else found


def chosen_threshold(points_curve: list[dict[str, Any]]) -> float | None:
    for row in points_curve:
        if (
            row["precision"] is not None
            and row["precision"] >= TARGET_PRECISION
            and row["shown"] >= 10
        ):
            return float(row["threshold"])
    return None


def by_mode(items: Sequence[Collected], mode: str) -> list[Collected]:
    return [item for item in items if item.case.mode == mode]


def report(gate: GhostGate, items: Sequence[Collected], split: str) -> list[dict[str, Any]]:
    lines = []
    for mode in ("line", "typing"):
        chosen_items = by_mode(items, mode)
        if not chosen_items:
            continue
        found = points(chosen_items, gate.decode_floor)
        scores = [gate.probability(p.values) for p in found]
        prose = [item for item in chosen_items if item.prose]
        prose_found = [p for p in found if p.prose]
        prose_scores = [s for p, s in zip(found, scores, strict=True) if p.prose]
        lines.append(
            {
                "split": split,
                "mode": mode,
                "gate": tally(
                    decide(found, scores, gate.threshold, gate.prose_threshold), chosen_items
                ),
                "gate_one_threshold": tally(decide(found, scores, gate.threshold), chosen_items),
                "token_threshold": {
                    "at": DEFAULT_TOKEN_THRESHOLD,
                    **token_threshold_tally(chosen_items, DEFAULT_TOKEN_THRESHOLD),
                },
                "prose": {
                    "gate": tally(decide(prose_found, prose_scores, gate.prose_threshold), prose),
                    "gate_one_threshold": tally(
                        decide(prose_found, prose_scores, gate.threshold), prose
                    ),
                    "token_threshold": token_threshold_tally(prose, DEFAULT_TOKEN_THRESHOLD),
                },
                "gate_curve": curve(found, np.array(scores), chosen_items),
            }
        )
    return lines


def fitted_for() -> FittedFor:
    from shadowtab.inference.engines.model_files import default_model_path

    adapter = SHIPPED_GATE.parent / "shadowtab-next-edit.lora.gguf"
    return FittedFor(default_model_path().name, adapter.name, file_sha256(str(adapter)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, nargs="+", required=True, help="folders of collected JSONL files"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="rows in projects")
    parser.add_argument("--write", action="store_true", help=f"save the gate as {SHIPPED_GATE}")
    args = parser.parse_args(argv)
    train_rows = [row for folder in args.data for row in read_rows(folder / "train.jsonl")]
    train = collected(train_rows, args.corpus, args.mirrors)
    best: tuple[float, float, float, list[Point], npt.NDArray[np.float64]] | None = None
    for floor in FLOORS:
        found = points(train, floor)
        scores = out_of_fold(found)
        rows = curve(found, scores, train)
        threshold = chosen_threshold(rows)
        saved = next((r["chars_saved_share"] for r in rows if r["threshold"] == threshold), 0.0)
        print(
            json.dumps(
                {
                    "fit": "out_of_fold",
                    "floor": floor,
                    "points": len(found),
                    "chosen": threshold,
                    "curve": rows,
                }
            )
        )
        if threshold is not None and (best is None or saved > best[0]):
            best = (saved, floor, threshold, found, scores)
    if best is None:
        print("ghost_gate: no floor reaches the target precision", file=sys.stderr)
        return 1
    _, floor, threshold, found, scores = best
    prose_rows = prose_curve(found, scores, train, threshold)
    prose_threshold = chosen_prose_threshold(prose_rows)
    print(json.dumps({"fit": "out_of_fold", "prose": prose_threshold, "curve": prose_rows}))
    x = np.array([p.values for p in found])
    y = np.array([p.correct for p in found], dtype=np.float64)
    w, b, mean, scale = fit(x, y)
    gate = GhostGate(
        fitted_for(),
        tuple(float(v) for v in w),
        b,
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
        threshold,
        floor,
        prose_threshold,
    )
    print(json.dumps({"gate": gate.to_dict()}))
    for folder, split in ((f, s) for f in args.data for s in ("heldout", "dev")):
        path = folder / f"{split}.jsonl"
        if path.exists():
            for line in report(gate, collected(read_rows(path), args.corpus, args.mirrors), split):
                print(json.dumps(line))
    if args.write:
        SHIPPED_GATE.write_text(json.dumps(gate.to_dict(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
