"""Starting real servers for the tests: on a free loopback port in their own process
group, ready when /models answers, the whole group stopped after. The process handling
is benchmarks/common/serving.py's (the benchmarks start llama.cpp's own server with it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# the repository root, for the `benchmarks` package (run as `python -m benchmarks.X` there)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.common.serving import LLAMA_CPP_SERVER, free_port
from benchmarks.common.serving import serving as serving_until_ready

__all__ = ["free_port", "llama_cpp_server", "serving"]


@contextmanager
def serving(
    command: Sequence[str], port: int, log: Path, start_s: float, stop_s: float
) -> Iterator[str]:
    """Run a server command (its output to `log`) until /models answers on `port`; yield
    its base URL; then stop the whole group (vLLM's engine and workers are child
    processes that outlive a terminated parent)."""
    url = f"http://127.0.0.1:{port}/v1"
    with serving_until_ready(command, f"{url}/models", log, start_s, stop_s):
        yield url


@contextmanager
def llama_cpp_server(model: Path, log: Path, extra: Sequence[str] = ()) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on loopback (logits_all for the
    logprobs that rank n > 1 candidates), stopped after. Yields its base URL."""
    port = free_port()
    command = [
        *LLAMA_CPP_SERVER, "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--logits_all", "true", "--n_threads", str(min(2, os.cpu_count() or 1)), *extra,
    ]  # fmt: skip
    with serving(command, port, log, start_s=120, stop_s=10) as url:
        yield url
