"""Fitting propagation's gate: per case the first place the gate passes is the one shown
(propagation offers places nearest first), and the threshold is the lowest whose
precision reaches the target with enough cases shown."""

from __future__ import annotations

from training.propagation_gate import MIN_SHOWN, TARGET_PRECISION, Row, chosen_threshold, shown


def row(case: int, correct: bool) -> Row:
    return Row(case, (), correct, 5 if correct else 0, 0.5)


def test_the_first_passing_place_of_each_case_is_shown() -> None:
    rows = [row(0, False), row(0, True), row(1, True), row(2, False)]
    scores = [0.4, 0.9, 0.7, 0.2]
    chosen = shown(rows, scores, 0.5)
    assert set(chosen) == {0, 1} and chosen[0].correct and chosen[1].correct
    assert shown(rows, scores, 0.3)[0] is rows[0]  # the nearer place passes first


def test_the_lowest_threshold_reaching_the_target_with_enough_cases_is_chosen() -> None:
    def point(threshold: float, shown_: int, precision: float) -> dict[str, object]:
        return {"threshold": threshold, "shown": shown_, "precision": precision}

    points = [
        point(0.5, 100, TARGET_PRECISION - 0.1),
        point(0.6, MIN_SHOWN - 1, 1.0),  # sure, but too few to trust
        point(0.7, MIN_SHOWN, TARGET_PRECISION),
        point(0.8, MIN_SHOWN, 1.0),
    ]
    assert chosen_threshold(points) == 0.7
    assert chosen_threshold(points[:2]) is None
