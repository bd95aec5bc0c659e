"""Suite-wide: the benchmark lines that tests/benchmarks recorded are printed at the end
of the run, so CI's log shows the reduced-size figures of every run."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = [
        value
        for report in terminalreporter.stats.get("passed", [])
        for name, value in getattr(report, "user_properties", [])
        if name == "benchmark_line"
    ]
    if lines:
        terminalreporter.section("benchmark lines (reduced size)")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def isolated_dirs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short /tmp folder (a unix socket path must fit in 107 bytes) holding this test's
    own shadowtab runtime, state, config and data dirs (several engineers run tests on one
    machine), no other SHADOWTAB_* setting, and the engine off; removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="stdir-", dir="/tmp"))
    for name in list(os.environ):
        if name.startswith("SHADOWTAB_"):
            monkeypatch.delenv(name)
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        monkeypatch.setenv(f"SHADOWTAB_{name}_DIR", str(base / sub))
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "off")
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
