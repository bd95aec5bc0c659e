"""One real engine (the packaged SmolLM2 model) shared by the inference tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from shadowtab.inference import LlamaCppEngine


@pytest.fixture(scope="session")
def engine() -> Iterator[LlamaCppEngine]:
    instance = LlamaCppEngine(n_ctx=2048, kv_cache_mb=64)
    yield instance
    instance.close()
