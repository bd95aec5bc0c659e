"""Propagation's learned gate: the shipped file loads for the features the code computes,
its probability is each place's confidence, places below its threshold are not offered,
and a file that cannot be used leaves the fixed confidences, said in the status line."""

from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path

import pytest
from shadowtab.inference.next_edit.propagation.propagation import CompletedEdit, places, propagate
from shadowtab.inference.next_edit.propagation.propagation_features import COUNT_LIMIT, FEATURES
from shadowtab.inference.next_edit.propagation.propagation_gate import (
    SHIPPED_GATE,
    PropagationGate,
    gate_at,
)
from shadowtab.inference.next_edit.propagation.propagation_source import PropagationSource

RENAME_BEFORE = "def load(path):\n    return open(path)\n\nx = load('a')\ny = load('b')\n"


def edit_once(path: str, before: str, old: str, new: str) -> tuple[CompletedEdit, str]:
    after = before.replace(old, new, 1)
    edit = CompletedEdit.from_texts(path, before, after)
    assert edit is not None
    return edit, after


def gate_with(threshold: float, bias: float = 0.0) -> PropagationGate:
    """A gate whose probability is sigmoid(bias) at every place (all weights 0)."""
    size = len(FEATURES)
    return PropagationGate((0.0,) * size, bias, (0.0,) * size, (1.0,) * size, threshold)


def test_the_shipped_gate_loads_for_the_features_the_code_computes() -> None:
    gate, state = gate_at(SHIPPED_GATE)
    assert gate is not None and state.startswith("gate on")
    assert len(gate.weights) == len(FEATURES) and 0.0 < gate.threshold < 1.0


def test_a_place_below_the_threshold_is_not_offered_and_the_probability_is_the_confidence() -> None:
    edit, after = edit_once("m.py", RENAME_BEFORE, "def load", "def read")
    sure = propagate(edit, {"m.py": after}, gate=gate_with(0.5, bias=2.0))
    assert len(sure) == 2 and {c.confidence for c in sure} == {0.881}  # sigmoid(2)
    assert propagate(edit, {"m.py": after}, gate=gate_with(0.5, bias=-2.0)) == []
    assert len(propagate(edit, {"m.py": after})) == 2  # no gate: the fixed confidences


def test_the_shipped_gate_offers_a_rename_but_not_a_value_changed_once() -> None:
    gate, _ = gate_at(SHIPPED_GATE)
    edit, after = edit_once("m.py", RENAME_BEFORE, "def load", "def read")
    assert len(propagate(edit, {"m.py": after}, gate=gate)) == 2
    values = "def f(x):\n    if x:\n        return True\n    y = True\n    return True\n"
    edit, after = edit_once("f.py", values, "return True", "return None")
    assert len(propagate(edit, {"f.py": after})) == 2  # the fixed confidences offer them
    assert propagate(edit, {"f.py": after}, gate=gate) == []


def test_features_are_bounded_on_a_large_file() -> None:
    before = "value = compute(value)\n" * 200_000  # ~4.6 MB
    edit, after = edit_once("big.py", before, "value = compute", "amount = compute")
    found = places(edit, {"big.py": after}, max_candidates=5)
    count = FEATURES.index("log_old_count")
    assert found and all(p.values[count] == math.log1p(COUNT_LIMIT) for p in found)
    # A gate that passes nothing examines every occurrence the search allows (400), each
    # far from the edit in a ~9 MB file: per place, the work stays near the place.
    far = "value = compute(value)\n" + "x = 1\n" * 1_500_000 + before[: 23 * 2000]
    edit, after = edit_once("far.py", far, "value = compute", "amount = compute")
    started = time.perf_counter()
    assert propagate(edit, {"far.py": after}, gate=gate_with(0.5, bias=-5.0)) == []
    assert time.perf_counter() - started < 0.6  # 0.08 s unloaded (1.3 s counting from 0)


def test_an_unusable_gate_file_leaves_the_fixed_confidences_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = json.loads(SHIPPED_GATE.read_text())
    data["features"] = data["features"][:-1]  # fitted on other features
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING):
        source = PropagationSource(stale)
    assert source.gate_state.startswith("gate off") and "fixed confidences" in source.gate_state
    assert "propagation gate not used" in caplog.text
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert PropagationSource(broken).gate_state.startswith("gate off")
    assert PropagationSource(None).gate_state == "gate off: fixed confidences"


def test_a_gate_round_trips_through_its_file(tmp_path: Path) -> None:
    gate = gate_with(0.7, bias=0.3)
    path = tmp_path / "gate.json"
    path.write_text(json.dumps(gate.to_dict()))
    assert PropagationGate.load(path) == gate
