"""The torture tests at reduced size: each drives the real code to its limits (killed
mid-write, fuzzed, its engine worker crashed, editors typing at once for minutes) and
fails when a figure that must be 0 is not. Their figures are printed at the end of the
run; `python tests/torture/run_torture.py NAME` runs one at full size (docs/MEASUREMENTS.md).
Marked slow: the daemon ones load the model; `pytest -m "not slow"` leaves them out."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torture_clients
import torture_confinement
import torture_fuzz
import torture_kill
import torture_soak
import torture_workday
import torture_worker

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the model loads on a busy machine


@pytest.fixture(autouse=True)
def process_state_restored() -> Iterator[None]:
    """A torture sets up the process as its script would (its daemon's SHADOWTAB_* dirs
    and engine in the environment, no core files): put the test process back after."""
    environ = dict(os.environ)
    core = resource.getrlimit(resource.RLIMIT_CORE)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        resource.setrlimit(resource.RLIMIT_CORE, core)


def assert_holds(torture: ModuleType, args: list[str], record_property: Any) -> None:
    parser = argparse.ArgumentParser()
    torture.add_arguments(parser)
    figures = torture.run(parser.parse_args(args))
    record_property("benchmark_line", json.dumps(figures))  # printed at the end of the run
    assert torture.failures(figures) == [], figures


def test_a_killed_journal_keeps_every_acknowledged_edit(record_property: Any) -> None:
    assert_holds(torture_kill, ["--trials", "6", "--lines", "5000"], record_property)


def test_no_uri_or_path_writes_outside_the_workspace(record_property: Any) -> None:
    assert_holds(torture_confinement, ["--uris", "100"], record_property)


def test_fuzzed_messages_leave_the_daemon_answering(record_property: Any) -> None:
    assert_holds(torture_fuzz, ["--messages", "150"], record_property)


def test_a_crashed_engine_worker_loses_no_session_or_edit(record_property: Any) -> None:
    assert_holds(torture_worker, ["--trials", "4"], record_property)


def test_eight_editors_typing_at_once_into_own_and_shared_files(record_property: Any) -> None:
    """Issue 44's eight editors at a small size (the full 8 x 1,000: run_torture.py
    clients): nothing lost, no error. Ghost text's latency next to one editor alone is
    issue 44's open target: 1.5-5.4x per editor at 120 keystrokes each on 2 cores
    (docs/MEASUREMENTS.md, 2026-12-06; 2x wanted), so a miss is reported as an expected
    failure with its figures, not hidden."""
    parser = argparse.ArgumentParser()
    torture_clients.add_arguments(parser)
    figures = torture_clients.run(parser.parse_args(["--clients", "8", "--keystrokes", "60"]))
    record_property("benchmark_line", json.dumps(figures))
    failed = torture_clients.failures(figures)
    latency = "ghost_text_after_pause_vs_alone"
    assert [name for name in failed if name != latency] == [], figures
    if failed:
        pytest.xfail(f"issue 44: {latency} {figures[latency]}")


def test_a_typing_soak_leaks_nothing(record_property: Any) -> None:
    # the warm-up's 100 sessions bring the daemon's RSS to its plateau (torture_soak.py)
    args = ["--seconds", "40", "--warmup-s", "20", "--warmup-churn-s", "0.2", "--churn-s", "5"]
    assert_holds(torture_soak, args, record_property)


def test_a_working_day_of_editors_an_agent_and_the_lock_leaks_nothing(
    record_property: Any,
) -> None:
    """Issue 44's soak (two editors, ghost text accepted and rejected, an agent writing
    through the shadow, the lock moved) at 90 s, its periods scaled down as the run is:
    the agent every 10 s, the lock every 30 s, a sample every 10 s; RSS, open files and
    threads at the end against the figures at 30 s, ghost text's p90 over the last 30 s
    against the first 30 s. The full 30 minutes: run_torture.py workday.

    One miss is reported as an expected failure with its figures, not hidden: the
    latency ratio (at most 2x here, 1.5x at full size): 30 s of pauses on 2 shared
    cores gave 0.96-3.44. (A diverged buffer, a keystroke pushed back to its editor by a
    `lock take` made while it typed, was fixed in lsp/commands.py: it fails the test.)"""
    args = ["--seconds", "90", "--sample-s", "10", "--reference-s", "30"]
    args += ["--agent-every-s", "10", "--lock-every-s", "30", "--lock-hold-s", "3"]
    parser = argparse.ArgumentParser()
    torture_workday.add_arguments(parser)
    figures = torture_workday.run(parser.parse_args([*args, "--max-latency-ratio", "2"]))
    record_property("benchmark_line", json.dumps(figures))
    failed = torture_workday.failures(figures)
    known = {"latency_windows.p90_ratio"}
    assert [name for name in failed if name not in known] == [], figures
    if failed:
        shown = {k: figures[k] for k in ("diverged_samples", "latency_windows")}
        pytest.xfail(f"issue 44: {', '.join(failed)}: {shown}")


def test_the_full_size_runner_prints_one_json_line(record_property: Any) -> None:
    """run_torture.py, the command docs/MEASUREMENTS.md's full-size figures come from:
    one JSON line, exit 0 when every must-be-0 figure is 0 (1 otherwise)."""
    runner = Path(__file__).with_name("run_torture.py")
    done = subprocess.run(
        [sys.executable, str(runner), "kill", "--trials", "2", "--lines", "500"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = done.stdout.splitlines()
    assert "lost_edits" in json.loads(line)
    record_property("benchmark_line", line)
