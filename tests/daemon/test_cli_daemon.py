"""`daemon status` says which weight type runs and, for engine.weights = "auto", what
the measurement expected and whether it was taken on a busy machine."""

from __future__ import annotations

from shadowtab.daemon.cli.daemon import _weights_line


def test_a_pinned_type_is_named_alone() -> None:
    assert _weights_line({"weights": "q8_0"}) == "q8_0"


def test_a_measured_choice_shows_the_expected_times_and_a_busy_measurement() -> None:
    choice = {
        "choice": "bf16",
        "expected_next_edit_ms": {"q8_0": 596.0, "bf16": 371.0},
        "provisional": False,
        "others_busy_cores": 0.0,
    }
    line = _weights_line({"weights": "bf16", "weights_choice": choice})
    assert line == "bf16 (auto, measured on this CPU; expected next edit: q8_0 596 ms, bf16 371 ms)"
    busy = {**choice, "provisional": True, "others_busy_cores": 1.4}
    line = _weights_line({"weights": "bf16", "weights_choice": busy})
    assert line.endswith("; provisional: other processes used 1.4 cores, measured again next start")
