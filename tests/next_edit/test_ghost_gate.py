"""Ghost text's learned gate: the cut points it judges, the features it reads, the file
it loads (only for the model it was fitted for), and the completion source that lets it
choose the cut."""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from pathlib import Path

import pytest
from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.ghost_text.completion_source import CompletionSource
from shadowtab.inference.next_edit.ghost_text.ghost_features import (
    FEATURES,
    Cut,
    Surroundings,
    cuts,
    features,
    region_at,
)
from shadowtab.inference.next_edit.ghost_text.ghost_gate import (
    SHIPPED_GATE,
    FittedFor,
    GateFileError,
    GhostGate,
    decodable,
    file_sha256,
    gate_for,
)
from shadowtab.inference.next_edit.situation import Situation
from shadowtab.inference.next_edit.token_confidence import TokenTrace
from test_token_confidence import ScriptedEngine

TEXT = "value = compute(first, second)\nother = compute(first, "
TRACE = TokenTrace((0.9, 0.6, 0.95, 0.2), (len("sec"), len("second"), len("second)"), 8))
GENERATED = "second) "
ADAPTER = SHIPPED_GATE.parent / "shadowtab-next-edit.lora.gguf"


def the_gate(
    weights: dict[str, float],
    threshold: float = 0.5,
    floor: float = 0.3,
    bias: float = 0.0,
    prose: float = 0.9,
) -> GhostGate:
    values = tuple(weights.get(name, 0.0) for name in FEATURES)
    ones = (1.0,) * len(FEATURES)
    zeros = (0.0,) * len(FEATURES)
    fitted = FittedFor("SmolLM2-135M-Instruct.Q4_1.gguf", None, None)
    return GhostGate(fitted, values, bias, zeros, ones, threshold, floor, prose)


def test_every_token_boundary_is_a_cut_and_the_floor_ends_them() -> None:
    found = cuts(GENERATED, TRACE, "", True)
    assert [c.text for c in found] == ["sec", "second", "second)", "second) "]
    assert [c.tokens for c in decodable(found, TRACE, 0.3)] == [1, 2, 3]
    assert [c.tokens for c in decodable(found, TRACE, 0.7)] == [1]


def test_a_cut_in_the_middle_of_a_line_rejoins_the_rest() -> None:
    trace = TokenTrace((0.9, 0.9, 0.9), (1, 3, 5))
    # the rest of the line is ")": only the text before the closer is shown
    assert [c.text for c in cuts("a, b)", trace, ")", True)] == ["a", "a, ", "a, b"]


def test_features_read_probabilities_repetition_and_names() -> None:
    around = Surroundings.of(TEXT, len(TEXT), "a.py", {})
    assert around.repetition is not None and around.repetition.text == "second"
    named = dict(zip(FEATURES, features(Cut(2, "second"), TRACE, True, around), strict=True))
    assert named["min_logp"] == pytest.approx(math.log(0.6))
    assert named["next_logp"] == pytest.approx(math.log(0.95))
    assert named["repetition_agrees"] == 1.0 and named["repetition_disagrees"] == 0.0
    assert named["unknown_names"] == 0.0 and named["unknown_partial"] == 0.0
    assert named["model_ended"] == 0.0
    made_up = dict(zip(FEATURES, features(Cut(2, "secnd, "), TRACE, True, around), strict=True))
    assert made_up["unknown_names"] == 1.0 and made_up["repetition_disagrees"] == 1.0
    last = dict(zip(FEATURES, features(Cut(4, "second) "), TRACE, True, around), strict=True))
    assert last["model_ended"] == 1.0 and last["next_logp"] == 0.0


def test_the_prompts_project_code_vouches_for_names_and_repeats() -> None:
    """A name the model read in the prompt's snippets of other files is not made up, and
    a line repeated there is repetition's evidence."""
    text = "result = "
    alone = Surroundings.of(text, len(text), "a.py", {})
    assert alone.repetition is None
    snippet = "total = 0\nresult = load_settings(path)\n"
    around = Surroundings.of(text, len(text), "a.py", {}, [snippet])
    assert around.repetition is not None and around.repetition.text == "load_settings"
    trace = TokenTrace((0.9, 0.9), (len("load_settings"), len("load_settings(")))
    cut = Cut(2, "load_settings(")
    before = dict(zip(FEATURES, features(cut, trace, False, alone), strict=True))
    after = dict(zip(FEATURES, features(cut, trace, False, around), strict=True))
    assert before["unknown_names"] == 1.0 and after["unknown_names"] == 0.0
    assert before["repetition_agrees"] == 0.0 and after["repetition_agrees"] == 1.0


def test_the_region_at_the_cursor() -> None:
    assert region_at("x = 1  # a comm", 15, "a.py") == "comment"
    assert region_at('x = "a str', 10, "a.py") == "string"
    assert region_at('x = "done" + va', 15, "a.py") == "code"
    assert region_at('"""doc\nmore', 11, "a.py") == "string"


def test_features_take_bounded_time_on_a_ten_megabyte_file() -> None:
    text = "value = compute(first, second)\n" * 340_000
    started = time.monotonic()
    around = Surroundings.of(text, len(text) // 2, "big.py", {})
    features(Cut(2, "second"), TRACE, True, around)
    assert time.monotonic() - started < 2.0


def test_the_gate_shows_the_longest_cut_it_passes_or_nothing() -> None:
    around = Surroundings.of(TEXT, len(TEXT), "a.py", {})
    # the probability rises with the least likely token: "sec" (0.9) passes, not "second"
    gate = the_gate({"min_logp": 10.0}, threshold=0.5, bias=3.0)
    chosen = gate.choose(GENERATED, TRACE, "", True, around)
    assert chosen is not None and chosen[0].text == "sec"
    refusing = replace(gate, bias=-100.0)
    assert refusing.choose(GENERATED, TRACE, "", True, around) is None


def test_in_a_comment_or_string_the_gate_must_be_sure() -> None:
    # the same continuation scores ~0.84 ("sec") in code, in a comment and in a string
    gate = the_gate({"min_logp": 10.0}, threshold=0.5, bias=2.7, prose=0.9)
    for text, shown in (
        ("value = compute(first, second)\nother = compute(first, ", "sec"),
        ("value = compute(first, second)\n# compute(first, ", None),
        ('value = compute(first, second)\nhelp = "compute(first, ', None),
    ):
        around = Surroundings.of(text, len(text), "a.py", {})
        chosen = gate.choose(GENERATED, TRACE, "", True, around)
        assert (chosen[0].text if chosen else None) == shown, text
    sure = replace(gate, prose_threshold=0.8)
    comment = "value = compute(first, second)\n# compute(first, "
    chosen = sure.choose(GENERATED, TRACE, "", True, Surroundings.of(comment, 49, "a.py", {}))
    assert chosen is not None and chosen[0].text == "sec"


def test_a_gate_file_round_trips_and_bad_files_are_refused(tmp_path: Path) -> None:
    gate = the_gate({"min_logp": 1.0})
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(gate.to_dict()))
    assert GhostGate.load(path) == gate
    for broken in (
        {**gate.to_dict(), "version": 99},
        {**gate.to_dict(), "features": ["min_logp"]},
        {**gate.to_dict(), "weights": [1.0]},
        {**gate.to_dict(), "decode_floor": 0.0},
        {**gate.to_dict(), "prose_threshold": 0.2},  # below the threshold: not "sure"
        {k: v for k, v in gate.to_dict().items() if k != "prose_threshold"},
    ):
        path.write_text(json.dumps(broken))
        with pytest.raises(GateFileError):
            GhostGate.load(path)
    path.write_text("{not json")
    with pytest.raises(GateFileError):
        GhostGate.load(path)


def test_a_gate_loads_only_for_the_model_it_was_fitted_for(tmp_path: Path) -> None:
    fitted = FittedFor("SmolLM2-135M-Instruct.Q4_1.gguf", ADAPTER.name, file_sha256(str(ADAPTER)))
    gate = the_gate({})
    path = tmp_path / "gate.json"
    path.write_text(json.dumps({**gate.to_dict(), "fitted_for": vars(fitted)}))
    merged = "/data/SmolLM2-135M-Instruct.Q4_1.merged-f51.requant-q8_0.gguf"
    found, why = gate_for({"model": merged, "adapter": str(ADAPTER)}, path)
    assert found is not None and why.startswith("on")
    found, why = gate_for({"model": "/m/qwen2.5-coder-0.5b.gguf", "adapter": None}, path)
    assert found is None and "another model" in why
    other_adapter = tmp_path / ADAPTER.name
    other_adapter.write_bytes(b"another adapter")
    found, _ = gate_for({"model": merged, "adapter": str(other_adapter)}, path)
    assert found is None
    found, why = gate_for({"model": merged}, tmp_path / "missing.json")
    assert found is None and why.startswith("off")


def test_the_completion_source_lets_a_matching_gate_choose_the_cut(tmp_path: Path) -> None:
    text = "x = compute(a, b)\ny = "
    situation = Situation("a.py", text, len(text))
    engine = ScriptedEngine()  # compute(a, b) with probabilities 0.97 0.95 0.9 0.4 0.99
    gate = the_gate({"min_logp": 10.0}, threshold=0.5, floor=0.3, bias=1.5)
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(gate.to_dict()))
    source = CompletionSource(lambda: engine, token_threshold=0.8, gate_path=path)  # type: ignore[arg-type, return-value]
    engine_stats = {"model": "/d/SmolLM2-135M-Instruct.Q4_1.gguf", "adapter": None}
    engine.stats = lambda: engine_stats  # type: ignore[method-assign]
    (found,) = source.candidates(Query(situation, n=3))
    # decoded to the gate's floor (0.3), one candidate; the gate passes up to "(a"
    assert engine.calls == [{"method": "complete", "n": 1, "min_token_p": 0.3, "heal": True}]
    assert found.edits[0].new_text == "compute(a"
    assert 0.5 <= found.confidence <= 1.0 and found.token_probs == (0.97, 0.95, 0.9)
    assert source.gate_state.startswith("on")
    # another model: the token threshold alone, as before
    engine_stats["model"] = "/d/other.gguf"
    other = CompletionSource(lambda: engine, token_threshold=0.8, gate_path=path)  # type: ignore[arg-type, return-value]
    engine.calls.clear()
    other.candidates(Query(situation, n=3))
    assert engine.calls[0]["min_token_p"] == 0.8
    assert "another model" in other.gate_state


def test_the_shipped_gate_is_fitted_for_the_shipped_adapter() -> None:
    """A new adapter makes the shipped gate stale: refit it (training/ghost_gate.py)."""
    gate = GhostGate.load(SHIPPED_GATE)
    assert gate.fitted_for.adapter == ADAPTER.name
    assert gate.fitted_for.adapter_sha256 == file_sha256(str(ADAPTER))
    merged = "/data/SmolLM2-135M-Instruct.Q4_1.merged-f5126f7699af.requant-q8_0.gguf"
    found, why = gate_for({"model": merged, "adapter": str(ADAPTER)})
    assert found == gate and why.startswith("on")
    assert 0.0 < gate.decode_floor <= gate.threshold < gate.prose_threshold <= 1.0
