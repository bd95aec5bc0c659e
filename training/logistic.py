"""Fitting the learned gates' logistic regressions (inference/next_edit/logistic.py
computes their probability): standardized features, an L2 penalty, Newton's method."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

L2 = 1.0


def fit(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> tuple[Any, ...]:
    """Standardized L2 logistic regression by Newton's method: (w, b, mean, scale)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * L2
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -50, 50)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1]), mean, scale


def predict(model: tuple[Any, ...], x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    w, b, mean, scale = model
    result: npt.NDArray[np.float64] = 1 / (
        1 + np.exp(-np.clip(((x - mean) / scale) @ w + b, -50, 50))
    )
    return result


def out_of_fold(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], fold: npt.NDArray[np.int_], folds: int
) -> npt.NDArray[np.float64]:
    """Each row's probability from a model fitted without its fold."""
    scores = np.zeros(len(x))
    for k in range(folds):
        model = fit(x[fold != k], y[fold != k])
        scores[fold == k] = predict(model, x[fold == k])
    return scores
