"""Token-level confidence on the real packaged model: complete() stops before the first
token less likely than min_token_p (the cut ghost text is also the fast one), and every
candidate carries each token's log-probability and logit gap to the runner-up."""

from __future__ import annotations

import itertools
import math

import pytest
from inference_samples import FIB, SORT
from shadowtab.inference import Engine, EngineError, LlamaCppEngine


def test_decoding_stops_before_the_first_unsure_token(any_engine: Engine) -> None:
    """Every engine kind (llama.cpp, torch: the same decoding code; OpenAI-compatible:
    the stream closed at the unsure token)."""
    engine = any_engine
    plain = engine.complete(FIB, 24, stop=["\n\n\n"])
    probs = [math.exp(lp) for lp in plain.logprobs[0]]
    assert len(probs) > 3, plain.texts
    # the threshold in the widest gap between the probabilities of the tokens after the
    # first (the cut falls inside the answer): engines differ between a cached and an
    # uncached prompt, a server by ~0.02 on an AVX2 CPU, so a narrow gap would move the cut
    later = sorted(probs[1:])
    low, high = max(itertools.pairwise(later), key=lambda pair: pair[1] - pair[0])
    threshold = (low + high) / 2
    first_unsure = next(i for i, p in enumerate(probs) if p < threshold)
    cut = engine.complete(FIB, 24, stop=["\n\n\n"], min_token_p=threshold)
    kept = plain.text_offsets[0][first_unsure - 1] if first_unsure else 0
    assert cut.texts == [plain.texts[0][:kept]]
    assert cut.finish_reasons == ["unsure"]
    if isinstance(engine, LlamaCppEngine):  # a server's usage is not sent for a closed stream
        assert cut.stats.generated_tokens == first_unsure < plain.stats.generated_tokens
    assert all(math.exp(lp) >= threshold for lp in cut.logprobs[0])


def test_every_token_carries_its_margin(engine: LlamaCppEngine) -> None:
    """Greedy: each chosen token was the model's first choice, so its gap to the
    runner-up is >= 0; a speculative rewrite reports the same per token."""
    plain = engine.complete(SORT, 16)
    rewrite = engine.rewrite("Rewrite the code.\n" + SORT, SORT, 40)
    for result in (plain, rewrite):
        (margins,) = result.token_margins
        assert len(margins) == len(result.logprobs[0]) > 0
        assert all(gap >= 0 for gap in margins)


def test_alternatives_below_the_threshold_are_not_decoded(engine: LlamaCppEngine) -> None:
    """No other first token reaches a threshold of 0.5: one candidate is decoded."""
    many = engine.complete(FIB, 8, n=3, min_token_p=0.5)
    assert len(many.texts) == 1


def test_a_threshold_outside_0_to_1_is_refused(engine: LlamaCppEngine) -> None:
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(EngineError, match="min_token_p"):
            engine.complete(FIB, 4, min_token_p=bad)  # type: ignore[arg-type]
