"""benchmarks/vs_llama_server.py without llama.cpp's server: it skips with a line saying
why (CI has no binary), and it picks the server's speculation type from its --help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.vs_llama_server import SERVER_VARIABLE, speculation_type

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_binary_it_prints_why_it_skipped_and_exits_0() -> None:
    env = {k: v for k, v in os.environ.items() if k != SERVER_VARIABLE}
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.vs_llama_server", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    figures = json.loads(line)
    assert figures["benchmark"] == "vs_llama_server"
    assert "no llama-server binary" in figures["skipped"]
    assert "scripts/build_llama_server.sh" in figures["skipped"]


def fake_server(tmp_path: Path, spec_types: str) -> Path:
    binary = tmp_path / "llama-server"
    binary.write_text(
        "#!/bin/sh\n"
        "echo '-h,    --help     print usage and exit'\n"
        f"echo '--spec-type {spec_types}     comma-separated list of types'\n"
    )
    binary.chmod(0o755)
    return binary


def test_ngram_simple_when_the_server_has_it(tmp_path: Path) -> None:
    listed = "none,draft-simple,ngram-simple,ngram-map-k,ngram-mod"
    assert speculation_type(fake_server(tmp_path, listed)) == "ngram-simple"


def test_another_ngram_type_when_it_has_not(tmp_path: Path) -> None:
    assert speculation_type(fake_server(tmp_path, "none,draft,ngram-cache")) == "ngram-cache"
    assert speculation_type(fake_server(tmp_path, "none,draft")) is None
