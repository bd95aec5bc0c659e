"""Every benchmark runs in reduced size and prints one JSON line with its figures (the
next-edit evaluation: one line per mode and source); the full-size figures in
docs/MEASUREMENTS.md come from the same scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

REDUCED_RUNS = {
    "agent_write_latency.py": (["--rounds", "3", "--lines", "1000"], "write_and_lint_p50_ms"),
    "shadow_edits.py": (
        ["--edits", "300", "--lint-runs", "3", "--mirrored", "10", "--sizes-mb", "0.5"],
        "two_editors",
    ),
    "lsp_latency.py": (["--iterations", "30"], "pump_over_standalone_p50"),
    "project_index.py": (["--files", "200", "--queries", "10"], "query_p50_ms"),
    "bench_daemon_startup.py": (["--rounds", "1"], "first_status_s_median"),
    "speculative_edits.py": (["--quick"], None),
    # q8_0 pinned, as next_edit_latency's
    "verify_in_prefill.py": (["--reps", "1", "--weights", "q8_0"], "in_prefill"),
    "batched_decode.py": (
        ["--rounds", "1", "--steps", "2", "--prompt-tokens", "64", "--weights", "q8_0"],
        "sequences",
    ),
    "kv_reuse.py": (["--quick"], None),
    "python_overhead.py": (["--quick"], "worst_python_share"),
    "kv_quant.py": (["--quick"], "q8_0_tokens_per_mb_over_f16"),
    # q8_0 pinned: "auto" (its default, the daemon's) would measure in its fresh data dir
    "next_edit_latency.py": (["--quick", "--weights", "q8_0"], "next_edit_p50_ms"),
    "busy_neighbour.py": (
        ["--cases", "1", "--neighbours", "none", "stream", "--", "--weights", "q8_0"],
        "runs",
    ),
    "adapter_merge.py": (["--quick"], "merged_prefill_over_attached"),
    "next_edit_eval.py": (["--quick"], "precision"),
    "ghost_keystrokes.py": (["--quick", "--weights", "q8_0"], "p50_ms"),  # q8_0 as above
    "ghost_rejoin.py": (["--cases", "3"], "rejoined_eol"),
    "ghost_partial_rewrite.py": (["--cases", "2"], "cursor_line_p50_ms"),
    "ghost_confidence.py": (["--cases", "3", "--typing-cases", "1"], "chosen_threshold"),
    "ghost_losses.py": (["--cases", "2", "--alternatives", "2"], "lost_at"),
    # one line per engine; torch's line is in the full run (its model loads for minutes here)
    "engines.py": (["--quick", "--engines", "llama.cpp,openai"], "engine"),
    # without $SHADOWTAB_LLAMA_SERVER (CI) a line saying why it skipped: test_vs_llama_server.py
    "vs_llama_server.py": (["--quick"], "benchmark"),
    "code_paths.py": ([], "keystroke"),  # already small: three messages traced
    "model_code_paths.py": ([], "ghost_text"),  # one request, the real model: already small
}
NEEDS_CORPUS = {
    "next_edit_eval.py",
    "ghost_rejoin.py",
    "ghost_partial_rewrite.py",
    "ghost_confidence.py",
    "ghost_losses.py",
}
# Scripts that print one line per part measured, and how many.
# next_edit_eval: typing x (ghost text, next edit) + next hunk x 3 + line (ghost text);
# engines: one per engine
LINE_COUNTS = {"next_edit_eval.py": 6, "engines.py": 2}


def edit_corpus() -> Path:
    """Where next_edit_eval.py looks for the corpora (see its CORPUS_VARIABLE)."""
    default = ROOT.parent / "shared" / "corpus"
    return Path(os.environ.get("SHADOWTAB_EDIT_CORPUS", default))


@pytest.mark.timeout(900)  # the subprocess's own limit: model benchmarks on a busy machine
@pytest.mark.parametrize("script", sorted(REDUCED_RUNS))
def test_benchmark_prints_one_json_line(script: str, record_property: Any) -> None:
    args, expected_key = REDUCED_RUNS[script]
    if script in NEEDS_CORPUS and not edit_corpus().is_dir():
        pytest.skip(f"no edit corpus at {edit_corpus()}")
    result = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{script.removesuffix('.py')}", *args],
        cwd=ROOT,  # run as the docs say: `python -m benchmarks.NAME` from the root
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == LINE_COUNTS.get(script, 1), result.stdout
    for line in lines:
        figures = json.loads(line)
        assert isinstance(figures, dict) and figures
        if expected_key is not None:
            assert expected_key in figures, figures
        record_property("benchmark_line", line)  # printed at the end of the run
