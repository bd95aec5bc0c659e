"""Fitting ghost text's gate: the regression learns which way a feature points, and per
case the longest cut whose score passes is the one shown (the product's rule)."""

from __future__ import annotations

import numpy as np

from training.ghost_gate import Point, decide
from training.logistic import fit, predict


def test_the_regression_learns_the_direction_of_a_feature() -> None:
    rng = np.random.default_rng(0)
    sure = rng.normal(0.0, 1.0, 400)
    noise = rng.normal(0.0, 1.0, 400)
    right = (sure + 0.3 * rng.normal(0.0, 1.0, 400) > 0).astype(np.float64)
    model = fit(np.column_stack([sure, noise]), right)
    weights = model[0]
    assert weights[0] > 1.0 and abs(weights[1]) < 0.5
    scores = predict(model, np.array([[2.0, 0.0], [-2.0, 0.0]]))
    assert scores[0] > 0.9 > 0.1 > scores[1]


def test_the_longest_passing_cut_of_each_case_is_shown() -> None:
    points = [
        Point(0, [], True, 3, 1, False),
        Point(0, [], True, 6, 2, False),
        Point(0, [], False, 0, 3, False),
        Point(1, [], False, 0, 1, False),
        Point(2, [], True, 4, 1, True),  # in a comment: the prose threshold
    ]
    chosen = decide(points, [0.9, 0.8, 0.4, 0.3, 0.8], 0.5, 0.95)
    assert list(chosen) == [0] and chosen[0].tokens == 2
    assert list(decide(points, [0.9, 0.8, 0.4, 0.3, 0.8], 0.5)) == [0, 2]
