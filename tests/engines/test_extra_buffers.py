"""Weights load without llama.cpp's extra buffer types (AMX, repacked layouts) wherever
this project loads them: the engine's runtime, and llama-cpp-python's `Llama` once
`use_plain_buffers_in_llama_class()` ran (its server, training tools, tests). Each check
in a fresh process: the switch is process-wide."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LOAD = """
import sys, llama_cpp
from shadowtab.inference import default_model_path
from shadowtab.inference.engines.llama_cpp.extra_buffers import use_plain_buffers_in_llama_class
if sys.argv[1] == "plain":
    use_plain_buffers_in_llama_class()
llm = llama_cpp.Llama(str(default_model_path()), n_ctx=128, n_threads=2, verbose=False,
                      vocab_only=sys.argv[2] == "vocab")
if sys.argv[2] == "decode":
    llm.eval(llm.tokenize(b"def add(a, b):\\n    return a + b\\n"))
print(llm.model_params.use_extra_bufts)
"""


def load(mode: str, what: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LOAD, mode, what], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_llama_class_loads_plain_weights_once_switched() -> None:
    assert load("library", "vocab") == "True"  # llama.cpp's own default
    assert load("plain", "vocab") == "False"


def cpu_has_amx() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and " amx_int8" in cpuinfo.read_text()


@pytest.mark.skipif(not cpu_has_amx(), reason="no AMX in this CPU: its kernels never run")
def test_the_packaged_model_decodes_on_an_amx_cpu() -> None:
    # without the switch, llama-cpp-python 0.3.36's AMX kernels crash (SIGSEGV) in this
    # decode; the engine's own loads are covered here by every test that runs the model
    assert load("plain", "decode") == "False"
