"""`daemon status` says which weight type runs and, for engine.weights = "auto", what
the measurement expected and whether it was taken on a busy machine; and what each
workspace's project index holds and skipped."""

from __future__ import annotations

from shadowtab.daemon.cli.daemon import _index_line, _threads_line, _weights_line


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


def test_the_threads_line_says_why_there_are_that_many() -> None:
    busy = {"threads": 1, "threads_max": 2, "threads_adaptive": True, "others_busy_cores": 0.9}
    assert _threads_line(busy) == "1 of 2 (other processes keep 0.9 cores busy)"
    idle = {**busy, "threads": 2, "others_busy_cores": 0.1}
    assert _threads_line(idle) == "2 (one per core; other processes keep 0.1 cores busy)"
    assert _threads_line({**idle, "threads_adaptive": False}) == "2 (engine.threads)"
    assert _threads_line({"threads": 4}) == "4"  # an engine that says no more


def test_a_project_index_line_says_what_is_indexed_skipped_and_why_it_stopped() -> None:
    index = {
        "state": "ready",
        "files": 5000,
        "windows": 75000,
        "definitions": 130000,
        "build_s": 19.8,
        "skipped": {"binary": 2, "ignored": 40},
        "stopped": "file limit of 5000 reached",
        "note": "the root is the home folder: indexed only up to the bounds",
    }
    line = _index_line({"root": "/home/u", "project_index": index})
    assert line == (
        "/home/u: ready, 5000 files, 75000 windows, 130000 definitions, built in 19.8 s; "
        "skipped: binary 2, ignored 40; file limit of 5000 reached; "
        "the root is the home folder: indexed only up to the bounds"
    )
