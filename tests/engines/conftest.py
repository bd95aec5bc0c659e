"""Real engines on the packaged SmolLM2 model shared by the inference tests: llama.cpp,
torch (skipped without the torch extra) and OpenAI-compatible over llama-cpp-python's own
server on loopback (skipped without its [server] extra), started here and stopped after."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from server_helpers import llama_cpp_server
from shadowtab.inference import Engine, LlamaCppEngine, default_model_path
from shadowtab.inference.engines.local.cpu_load import physical_cores

if TYPE_CHECKING:
    from shadowtab.inference.engines.openai.engine import OpenAIEngine
    from shadowtab.inference.engines.torch.engine import TorchEngine

ENGINE_KINDS = ["llama.cpp", "torch", "openai"]


@pytest.fixture(scope="session")
def engine() -> Iterator[LlamaCppEngine]:
    # Threads set, so not adapted to the load: tests compare two calls' answers, and
    # another thread count (a busy machine) changes the logits' last digits enough to
    # flip a near tie (n = 3's first candidate against greedy's under CI's load).
    instance = LlamaCppEngine(n_ctx=2048, kv_cache_mb=64, n_threads=physical_cores())
    yield instance
    instance.close()


def need_module(name: str, extra: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed (pip install 'shadowtab[{extra}]')")


@pytest.fixture(scope="session")
def torch_models_dir(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the packaged GGUF's torch conversion is cached across test runs."""
    cache = getattr(pytestconfig, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("shadowtab-torch-data"))
    return tmp_path_factory.mktemp("torch-data")


@pytest.fixture(scope="session")
def torch_engine(torch_models_dir: Path) -> Iterator[TorchEngine]:
    need_module("torch", "torch")
    need_module("transformers", "torch")
    from shadowtab.inference.engines.torch.engine import TorchEngine

    instance = TorchEngine(n_ctx=2048, kv_cache_mb=64, data_dir=torch_models_dir)
    yield instance
    instance.close()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on the packaged model, no adapter.
    Yields its base URL."""
    need_module("sse_starlette", "server")
    need_module("starlette_context", "server")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_cpp_server(default_model_path(), log) as url:
        yield url


@pytest.fixture(scope="session")
def openai_engine(llama_server: str) -> Iterator[OpenAIEngine]:
    from shadowtab.inference.engines.openai.client import ServerOptions
    from shadowtab.inference.engines.openai.engine import OpenAIEngine

    instance = OpenAIEngine(ServerOptions(base_url=llama_server, timeout_s=120), n_ctx=2048)
    yield instance
    instance.close()


@pytest.fixture(params=ENGINE_KINDS)
def any_engine(request: pytest.FixtureRequest) -> Engine:
    """The contract suite runs once per engine kind."""
    fixture = {"llama.cpp": "engine", "torch": "torch_engine", "openai": "openai_engine"}
    return request.getfixturevalue(fixture[request.param])
