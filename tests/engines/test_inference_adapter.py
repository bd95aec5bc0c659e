"""engine.adapter: a LoRA adapter loads onto the quantized base and changes its output;
a missing, corrupt, truncated or wrong-shape adapter is named in stats() and the
engine keeps serving with the base model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from adapter_samples import DAMAGES, damaged_adapter, write_adapter
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.formats import FORMATS
from shadowtab.inference.next_edit.predictor import EnginePredictor

PROMPT = "def add(a, b):\n    return"


def engine_with(adapter: str, formats: tuple[str, ...] | None = None) -> LlamaCppEngine:
    return LlamaCppEngine(n_ctx=512, kv_cache_mb=16, adapter=adapter, adapter_formats=formats)


@pytest.fixture(scope="module")
def base_text() -> Iterator[str]:
    """The base model's output, without any adapter (the packaged one included)."""
    base = engine_with("none")
    yield base.complete(PROMPT, max_tokens=12).texts[0]
    base.close()


@pytest.fixture
def closing() -> Iterator[list[LlamaCppEngine]]:
    engines: list[LlamaCppEngine] = []
    yield engines
    for instance in engines:
        instance.close()


def test_default_without_a_packaged_adapter_is_the_base_model(engine: LlamaCppEngine) -> None:
    from shadowtab.inference.engines.adapter_files import packaged_adapter

    stats = engine.stats()
    assert stats["adapter_setting"] == "default"
    assert stats["adapter"] == (str(packaged_adapter()) if packaged_adapter() else None)
    assert stats["adapter_error"] is None


def test_adapter_loads_and_changes_the_output(
    tmp_path: Path, base_text: str, closing: list[LlamaCppEngine]
) -> None:
    path = write_adapter(tmp_path / "test.lora.gguf")
    tuned = engine_with(str(path))
    closing.append(tuned)
    assert tuned.stats()["adapter"] == str(path)
    assert tuned.stats()["adapter_error"] is None
    assert tuned.complete(PROMPT, max_tokens=12).texts[0] != base_text


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_bad_adapter_is_named_and_the_base_model_serves(
    damage: str, tmp_path: Path, base_text: str, closing: list[LlamaCppEngine]
) -> None:
    path = damaged_adapter(tmp_path, damage)
    served = engine_with(str(path))
    closing.append(served)
    stats = served.stats()
    assert stats["state"] == "ready"
    assert stats["adapter"] is None
    assert "engine.adapter" in stats["adapter_error"]
    assert str(path) in stats["adapter_error"]
    assert "base model" in stats["adapter_error"]
    assert served.complete(PROMPT, max_tokens=12).texts[0] == base_text


def test_none_means_no_adapter(closing: list[LlamaCppEngine]) -> None:
    served = engine_with("none")
    closing.append(served)
    assert served.stats()["adapter"] is None
    assert served.stats()["adapter_error"] is None


def test_the_predictor_renders_the_format_the_adapter_names(
    tmp_path: Path, closing: list[LlamaCppEngine]
) -> None:
    path = write_adapter(tmp_path / "zeta.lora.gguf", prompt_format="zeta")
    tuned = engine_with(str(path), tuple(FORMATS))
    closing.append(tuned)
    assert tuned.stats()["adapter_format"] == "zeta"
    assert EnginePredictor(lambda: tuned).model.format.name == "zeta"  # format "auto"
    assert EnginePredictor(lambda: tuned, "generic").model.format.name == "generic"


def test_an_adapter_for_an_unknown_format_is_refused_and_the_base_model_serves(
    tmp_path: Path, base_text: str, closing: list[LlamaCppEngine]
) -> None:
    path = write_adapter(tmp_path / "odd.lora.gguf", prompt_format="no-such-format")
    served = engine_with(str(path), tuple(FORMATS))
    closing.append(served)
    stats = served.stats()
    assert stats["adapter"] is None and stats["adapter_format"] is None
    assert "engine.adapter" in stats["adapter_error"]
    assert "'no-such-format'" in stats["adapter_error"]
    assert served.complete(PROMPT, max_tokens=12).texts[0] == base_text
    assert EnginePredictor(lambda: served).model.format.name == "generic"
