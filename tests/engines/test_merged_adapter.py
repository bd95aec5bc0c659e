"""engine.merge_adapter: the adapter merged into the converted weights answers as the
attached one (up to near ties: the merged weights are rounded once more), is made once
per data dir without keeping its F32 intermediate, and a bad adapter is named while the
base model serves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adapter_prompts import copy_prompt, typing_prompt
from adapter_samples import write_adapter
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.adapter_files import packaged_adapter
from shadowtab.inference.next_edit.situation import RenderedPrompt

NEAR_TIE_GAP = 0.15

pytestmark = pytest.mark.skipif(packaged_adapter() is None, reason="no packaged adapter")


def engine(data_dir: Path, merge: bool, adapter: str = "default") -> LlamaCppEngine:
    return LlamaCppEngine(
        n_ctx=1024,
        kv_cache_mb=32,
        data_dir=data_dir,
        requantize_to="f16",  # the closest to the attached F32 adapter's arithmetic
        adapter=adapter,
        merge_adapter=merge,
        n_threads=2,
    )


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LlamaCppEngine]]:
    data_dir = tmp_path_factory.mktemp("merge")
    made = {"attached": engine(data_dir, False), "merged": engine(data_dir, True)}
    yield made
    for each in made.values():
        each.close()


@pytest.mark.parametrize("prompt_of", [typing_prompt, copy_prompt], ids=["typing", "copy"])
def test_the_merged_adapter_answers_as_the_attached_one(
    engines: dict[str, LlamaCppEngine], prompt_of: Callable[[], tuple[RenderedPrompt, Any]]
) -> None:
    rendered, stop = prompt_of()
    attached = engines["attached"].rewrite(rendered.prompt, rendered.draft, 64, stop=list(stop))
    merged = engines["merged"].rewrite(rendered.prompt, rendered.draft, 64, stop=list(stop))
    a, m = attached.token_ids, merged.token_ids
    differs = next((i for i, (x, y) in enumerate(zip(a, m, strict=False)) if x != y), None)
    if differs is None:
        assert len(a) == len(m) and attached.texts == merged.texts
    else:  # a near tie of the attached run, nothing more
        assert attached.margins[differs] < NEAR_TIE_GAP, (differs, attached.texts, merged.texts)


def test_the_merged_model_names_its_adapter_and_is_made_once(
    engines: dict[str, LlamaCppEngine], tmp_path: Path
) -> None:
    stats = engines["merged"].stats()
    assert stats["adapter_merged"] and stats["adapter"] == str(packaged_adapter())
    assert stats["adapter_format"] == "shadowtab" and stats["adapter_error"] is None
    assert not engines["attached"].stats()["adapter_merged"]
    loaded = engines["merged"].loaded_model_path
    assert ".merged-" in loaded.name and loaded.name.endswith(".requant-f16.gguf")
    models = loaded.parent
    assert not [p for p in models.glob("*.merged-*.gguf") if "requant" not in p.name]
    made_at = loaded.stat().st_mtime_ns
    again = engine(models.parent, True)
    try:
        assert again.loaded_model_path == loaded and loaded.stat().st_mtime_ns == made_at
    finally:
        again.close()


def test_an_adapter_that_does_not_fit_is_named_and_the_base_model_serves(
    tmp_path: Path,
) -> None:
    wrong = write_adapter(tmp_path / "wrong.lora.gguf", hidden=64)  # shapes of another model
    tuned = engine(tmp_path / "data", True, adapter=str(wrong))
    try:
        stats = tuned.stats()
        assert not stats["adapter_merged"] and stats["adapter"] is None
        assert "serving the base model without it" in (stats["adapter_error"] or "")
        assert tuned.complete("def add(a, b):\n    return", 8).texts[0]
    finally:
        tuned.close()
