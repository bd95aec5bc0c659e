"""The prompt's cache model (inference/engines/local/cache_model.py): which tokens it
says follow, and how its opinion is mixed into the model's row."""

from __future__ import annotations

import math

import numpy as np
from shadowtab.inference.engines.local.cache_model import CacheMix, PromptCache


def test_the_longest_recurring_context_decides() -> None:
    # [2, 3, 4] recurs twice (-> 5, then -> 6), but only the second occurrence shares
    # four tokens ([7, 2, 3, 4]) with the end
    cache = PromptCache([1, 2, 3, 4, 5, 9, 7, 2, 3, 4, 6, 8, 7, 2, 3, 4], CacheMix())
    assert cache.followers() == {6: 1}


def test_every_occurrence_of_the_context_counts() -> None:
    cache = PromptCache([1, 2, 3, 5, 1, 2, 3, 5, 1, 2, 3, 6, 0, 1, 2, 3], CacheMix())
    assert cache.followers() == {5: 2, 6: 1}


def test_a_context_shorter_than_min_match_says_nothing() -> None:
    cache = PromptCache([1, 2, 5, 9, 9, 1, 2], CacheMix(min_match=3))
    assert not cache.followers()
    row = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    assert cache.mixed(row) is row


def test_the_output_extends_the_history() -> None:
    cache = PromptCache([1, 2, 3, 4, 0, 1, 2], CacheMix())
    assert not cache.followers()
    cache.push(3)
    assert cache.followers() == {4: 1}


def test_the_mix_is_a_distribution_weighted_by_evidence() -> None:
    mix = CacheMix(weight=0.5, evidence=1.0)
    cache = PromptCache([9, 1, 2, 3, 4, 8, 1, 2, 3, 4, 7, 1, 2, 3], mix)  # [1, 2, 3] -> 4 twice
    row = np.zeros(6, dtype=np.float32)  # the model: uniform
    probs = np.exp(cache.mixed(row))
    lam = 0.5 * 2 / (2 + 1.0)
    assert math.isclose(float(probs.sum()), 1.0, rel_tol=1e-5)
    assert math.isclose(float(probs[4]), (1 - lam) / 6 + lam, rel_tol=1e-5)
    assert math.isclose(float(probs[0]), (1 - lam) / 6, rel_tol=1e-5)
