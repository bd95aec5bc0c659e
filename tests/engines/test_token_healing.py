"""Token healing (inference/engines/local/healing.py): a prompt that ends inside a word is
backed up over its last token(s) and the first generated tokens must re-write them.
On a scripted runtime (the constraint, the text, the renormalized probabilities, the
alternatives) and on the packaged model (llama.cpp and torch: the same decoding code)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np
import numpy.typing as npt
import pytest
from inference_samples import CLASS
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.api import Completion, RequestStats
from shadowtab.inference.engines.local.generation import (
    GenerationRequest,
    request_prompt,
    run_generation,
)
from shadowtab.inference.engines.local.healing import (
    DISALLOWED_GAP,
    Healing,
    Vocabulary,
    backed_up,
    heal,
)
from shadowtab.inference.engines.local.kv_cache import PrefixCache
from shadowtab.inference.engines.local.runtime import Runtime

PIECES = [
    b"",  # 0: end of text (a control token)
    b"self",  # 1
    b".",  # 2
    b"na",  # 3
    b"name",  # 4
    b"n",  # 5
    b"a",  # 6
    b"me",  # 7
    b"names",  # 8
    b"x",  # 9
    b"\n",  # 10
    b"nab",  # 11
    b" =",  # 12
    b"<|im_start|>",  # 13: a control token with text (as the torch runtime reports it)
    b"n\n",  # 14: starts with "n", but ends a line
]
SELF, DOT, NA, NAME, N, A, ME, NAMES, X, NEWLINE, NAB, EQ, IM_START, N_NEWLINE = range(1, 15)
Scores = Callable[[list[int]], dict[int, float]]


class PieceRuntime:
    """A runtime whose 'model' gives the logits `scores(tokens)` (others: -10) after the
    tokens its sequence holds."""

    add_bos = False
    pass_tile = 0

    def __init__(self, scores: Scores) -> None:
        self.scores = scores
        self.kv: dict[int, list[int]] = {}
        self.evaluated: list[list[int]] = []

    def tokenize(self, text: str, add_bos: bool, special: bool = False) -> list[int]:
        raise AssertionError("the tests give the prompt's tokens")

    def piece(self, token: int) -> bytes:
        return PIECES[token]

    def is_end_of_generation(self, token: int) -> bool:
        return token == 0

    def is_control(self, token: int) -> bool:
        return token in (0, IM_START)

    def vocab_size(self) -> int:
        return len(PIECES)

    def decode(
        self, tokens: Sequence[int], seq: int, pos0: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        held = self.kv.setdefault(seq, [])
        assert len(held) == pos0
        held.extend(tokens)
        self.evaluated.append(list(tokens))
        rows = np.full((len(outputs), len(PIECES)), -10.0, dtype=np.float32)
        for row, j in enumerate(outputs):
            for token, logit in self.scores(held[: pos0 + j + 1]).items():
                rows[row, token] = logit
        return rows

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None:
        del self.kv.setdefault(seq, [])[start:]

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        self.kv[dst] = list(self.kv.get(src, [])[:end])

    def kv_bytes_per_token(self) -> int:
        return 1

    def interruptible(self, owner: object | None = None) -> AbstractContextManager[None]:
        return nullcontext()

    def interrupt(self, owner: object | None = None) -> None:
        return None

    def close(self) -> None:
        return None


def generate(
    scores: Scores, prompt: list[int], heal_it: bool = True, n: int = 1, min_token_p: float = 0.0
) -> Completion:
    runtime = PieceRuntime(scores)
    as_runtime: Runtime = runtime
    cache = PrefixCache(runtime, 4, 1000, 1000)

    def prompt_tokens(_: Runtime, __: str, ___: int, stats: RequestStats) -> list[int]:
        stats.prompt_tokens = len(prompt)
        return list(prompt)

    request = GenerationRequest(
        "", None, 8, ("\n",), n, None, min_token_p=min_token_p, heal=heal_it
    )
    tokens = request_prompt(as_runtime, request, prompt_tokens, Vocabulary(as_runtime))
    return run_generation(as_runtime, cache, request, tokens, lambda: None, None)


def probability(logits: dict[int, float], token: int, among: Sequence[int]) -> float:
    return math.exp(logits[token]) / sum(math.exp(logits.get(t, -10.0)) for t in among)


def vocabulary() -> Vocabulary:
    return Vocabulary(PieceRuntime(lambda tokens: {}))


def test_the_vocabulary_answers_which_tokens_start_with_or_prefix_a_fragment() -> None:
    words = vocabulary()
    assert sorted(int(t) for t in words.starting_with(b"na")) == [NA, NAME, NAMES, NAB]
    assert sorted(int(t) for t in words.starting_with(b"n")) == [
        NA,
        NAME,
        N,
        NAMES,
        NAB,
        N_NEWLINE,
    ]
    assert list(words.starting_with(b"q")) == []
    assert sorted(words.prefixes_of(b"nam")) == [NA, N]
    assert list(words.starting_with(b"<|")) == []  # control tokens are never written


def test_the_prompt_backs_up_over_the_typed_fragment_of_a_word() -> None:
    words = vocabulary()
    assert backed_up([SELF, DOT, NA], words) == 1  # "na" is the start of "name"
    assert backed_up([SELF, N, A], words) == 2  # "n" + "a": one token could span both
    assert backed_up([SELF, X], words) == 0  # nothing goes on from "x": nothing to heal
    assert backed_up([SELF, NEWLINE], words) == 0  # never back over a line end
    assert backed_up([SELF, N_NEWLINE], words) == 0
    assert backed_up([NA], words) == 0  # a token always stays, to prefill
    assert backed_up([IM_START, NA], words) == 1
    assert backed_up([NA, IM_START], words) == 0  # a control token is not text
    healed = heal([SELF, DOT, NA], words)
    assert (healed.tokens, healed.removed, healed.backed_up) == ([SELF, DOT], b"na", 1)


def test_the_constraint_renormalizes_over_the_tokens_that_rewrite_the_fragment() -> None:
    row = np.full(len(PIECES), -10.0, dtype=np.float32)
    row[[X, NAME, NA]] = [5.0, 2.0, 1.0]
    healing = Healing(vocabulary(), b"na")
    constrained = healing.constrain(row)
    assert int(np.argmax(constrained)) == NAME
    assert constrained[X] == pytest.approx(2.0 - DISALLOWED_GAP)
    allowed = [NA, NAME, NAMES, NAB, N]
    expected = probability({X: 5.0, NAME: 2.0, NA: 1.0}, NAME, allowed)
    softmax = (
        np.exp(constrained - constrained.max()) / np.exp(constrained - constrained.max()).sum()
    )
    assert float(softmax[NAME]) == pytest.approx(expected, rel=1e-6)
    assert healing.written(b"name") == b"me" and healing.pending == b""
    assert healing.constrain(row) is row  # nothing left to re-write: free


def test_a_healed_completion_continues_the_word_and_does_not_repeat_it() -> None:
    after_dot = {X: 5.0, NAME: 2.0, NA: 1.0}

    def scores(tokens: list[int]) -> dict[int, float]:
        if tokens[-1] == DOT:
            return after_dot
        if tokens[-1] == NA:
            return {X: 3.0}  # unhealed, the model is lost after the odd "na"
        return {NEWLINE: 5.0}

    healed = generate(scores, [SELF, DOT, NA])
    assert healed.texts == ["me"] and healed.token_ids == [NAME, NEWLINE]  # then the stop
    assert healed.text_offsets == [[2, 2]]
    allowed = [NA, NAME, NAMES, NAB, N]
    assert math.exp(healed.logprobs[0][0]) == pytest.approx(
        probability(after_dot, NAME, allowed), rel=1e-6
    )
    assert healed.stats.healed_tokens == 1 and healed.stats.evaluated_prompt_tokens == 2
    plain = generate(scores, [SELF, DOT, NA], heal_it=False)
    assert plain.texts == ["x"] and plain.stats.healed_tokens == 0


def test_a_token_shorter_than_the_fragment_keeps_the_constraint_for_the_rest() -> None:
    """ "n" re-writes part of "na": the next token must start with "a"."""

    def scores(tokens: list[int]) -> dict[int, float]:
        last = tokens[-1]
        if last == DOT:
            return {N: 3.0, NAME: 1.0}
        if last == N:
            return {X: 4.0, A: 0.0}
        if last == A:
            return {ME: 2.0}
        return {NEWLINE: 5.0}

    healed = generate(scores, [SELF, DOT, NA])
    assert healed.token_ids == [N, A, ME, NEWLINE]
    assert healed.texts == ["me"]
    assert healed.text_offsets == [[0, 0, 2, 2]]  # the re-written bytes are not the text
    assert math.exp(healed.logprobs[0][1]) == pytest.approx(1.0)  # "a" was the only way on
    assert healed.token_margins[0][1] == pytest.approx(DISALLOWED_GAP)


def test_the_threshold_judges_the_renormalized_probability() -> None:
    """0.8 cuts the unhealed answer at once; the healed first token is sure given "na"."""

    def scores(tokens: list[int]) -> dict[int, float]:
        if tokens[-1] == DOT:
            return {X: 6.0, NAME: 4.0}
        if tokens[-1] == NA:
            return {X: 0.0, ME: 0.0}
        return {NEWLINE: 5.0}

    assert generate(scores, [SELF, DOT, NA], min_token_p=0.8).texts == ["me"]
    unhealed = generate(scores, [SELF, DOT, NA], heal_it=False, min_token_p=0.8)
    assert unhealed.texts == [""] and unhealed.finish_reasons == ["unsure"]


def test_alternatives_heal_too() -> None:
    def scores(tokens: list[int]) -> dict[int, float]:
        if tokens[-1] == DOT:
            return {X: 9.0, NAME: 2.0, NAMES: 1.9}
        return {NEWLINE: 5.0}

    both = generate(scores, [SELF, DOT, NA], n=2)
    assert both.texts == ["me", "mes"]


# the packaged model

PERSON = (
    "class Person:\n"
    "    def __init__(self, name, age):\n"
    "        self.name = name\n"
    "        self.age = age\n\n"
    "    def greet(self):\n"
    "        return 'Hello ' + self.na"
)
STACK = CLASS + "        self.it"


@pytest.fixture(params=["llama.cpp", "torch"])
def local_engine(request: pytest.FixtureRequest) -> LlamaCppEngine:
    """Both local engines share the decoding code healing lives in."""
    fixture = {"llama.cpp": "engine", "torch": "torch_engine"}[request.param]
    engine: LlamaCppEngine = request.getfixturevalue(fixture)
    return engine


@pytest.mark.parametrize(("prompt", "word"), [(PERSON, "self.name"), (STACK, "self.items")])
def test_the_packaged_model_finishes_the_typed_word(
    local_engine: LlamaCppEngine, prompt: str, word: str
) -> None:
    healed = local_engine.complete(prompt, 12, stop=["\n"], heal=True, min_token_p=0.8)
    (text,) = healed.texts
    typed = prompt[prompt.rindex("self.") :]
    assert (typed + text).startswith(word), text  # the word goes on from what was typed
    assert not text.startswith(typed[-2:]), text  # the fragment is not written again
    assert healed.stats.healed_tokens >= 1
    offsets = healed.text_offsets[0]
    assert len(offsets) == len(healed.logprobs[0]) and offsets[-1] == len(text)
    assert all(math.exp(lp) >= 0.8 for lp in healed.logprobs[0])


def test_healing_is_served_by_the_prompt_warming_prefilled(engine: LlamaCppEngine) -> None:
    """EnginePredictor.follow warms the continuation's prompt; the healed prompt is a
    prefix of it, so only its last token is evaluated (for its logits)."""
    prompt = STACK.replace("Stack", "Queue")  # a prompt no other test left in the cache
    healed_before = engine.stats()["totals"].get("healed_tokens", 0)
    engine.warm(prompt)
    healed = engine.complete(prompt, 8, stop=["\n"], heal=True)
    stats = healed.stats
    assert stats.healed_tokens >= 1
    assert stats.evaluated_prompt_tokens == 1
    assert stats.reused_prompt_tokens == stats.prompt_tokens - stats.healed_tokens - 1
    assert engine.stats()["totals"]["healed_tokens"] == healed_before + stats.healed_tokens
