"""The packaged model's engine, shared by the next-edit tests that need real tokens or
the real model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from shadowtab.inference import LlamaCppEngine


@pytest.fixture(scope="session")
def engine() -> Iterator[LlamaCppEngine]:
    instance = LlamaCppEngine(n_ctx=2048, kv_cache_mb=64)
    yield instance
    instance.close()
