"""Every benchmark runs in reduced size and prints one JSON line with its figures (the
full-size figures in the README come from the same scripts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

REDUCED_RUNS = {
    "shadow_edits.py": (
        ["--edits", "300", "--lint-runs", "3", "--mirrored", "10"],
        "two_editors",
    ),
    "lsp_latency.py": (["--iterations", "30"], "pump_over_standalone_p50"),
    "bench_daemon_startup.py": (["--rounds", "1"], "first_status_s_median"),
    "speculative_edits.py": (["--quick"], None),
    "kv_reuse.py": (["--quick"], None),
    # one line per engine; torch's line is in the full run (its model loads for minutes here)
    "engines.py": (["--quick", "--engines", "llama.cpp,openai"], "engine"),
}
LINES = {"engines.py": 2}


@pytest.mark.parametrize("script", sorted(REDUCED_RUNS))
def test_benchmark_prints_one_json_line(script: str, record_property: Any) -> None:
    args, expected_key = REDUCED_RUNS[script]
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == LINES.get(script, 1), result.stdout
    for line in lines:
        figures = json.loads(line)
        assert isinstance(figures, dict) and figures
        if expected_key is not None:
            assert expected_key in figures, figures
        record_property("benchmark_line", line)  # printed at the end of the run
