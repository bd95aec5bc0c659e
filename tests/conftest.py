"""Suite-wide: the benchmark lines that tests/benchmarks recorded are printed at the end
of the run, so CI's log shows the reduced-size figures of every run."""

from __future__ import annotations

from typing import Any


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
