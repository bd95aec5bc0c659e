"""The packaged next-edit adapter (a GGUF LoRA for llama.cpp) on the torch engine: read back
into peft and merged, it gives transformers' own greedy output of the peft model that
peft loads from the directory `shadowtab adapter export-peft` writes; it changes the
base model's answer, names its prompt format, and on a copy-the-window prompt answers
close to the llama.cpp engine with the same adapter (Q4_1 there, dequantized here). A
bad adapter is named in stats() and the base model serves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from adapter_prompts import copy_prompt, similarity, typing_prompt
from adapter_samples import DAMAGES, damaged_adapter, write_adapter
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.adapter_files import packaged_adapter

if TYPE_CHECKING:
    from shadowtab.inference.engines.torch.engine import TorchEngine

TOKENS = 24
# Greedy on the dequantized weights vs Q4_1: the same answer but for a near tie or two.
COPY_SIMILARITY = 0.9


def torch_with(model: Path, adapter: str, **extra: Any) -> TorchEngine:
    from shadowtab.inference.engines.torch.engine import TorchEngine

    return TorchEngine(model_path=model, n_ctx=1024, kv_cache_mb=16, n_threads=2, adapter=adapter,
                       **extra)  # fmt: skip


@pytest.fixture(scope="module")
def converted(torch_engine: TorchEngine) -> Path:
    """The packaged model as a Hugging Face directory (the torch engine's conversion)."""
    return torch_engine.loaded_model_path


@pytest.fixture(scope="module")
def base_engine(converted: Path) -> Iterator[TorchEngine]:
    engine = torch_with(converted, "none")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def peft_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged adapter written by the CLI, as a team would for vLLM."""
    from shadowtab.daemon.cli.main import main

    target = tmp_path_factory.mktemp("peft") / "next-edit"
    assert main(["adapter", "export-peft", str(target)]) == 0
    return target


def greedy(
    engine: TorchEngine | LlamaCppEngine,
    prompt: str,
    stop: tuple[str, ...] = (),
    tokens: int = TOKENS,
) -> Any:
    return engine.rewrite(prompt, "x", tokens, stop=list(stop), speculative=False)


def test_the_packaged_adapter_loads_by_default(torch_engine: TorchEngine) -> None:
    from shadowtab.inference.next_edit.predictor import EnginePredictor

    stats = torch_engine.stats()
    assert stats["adapter"] == str(packaged_adapter())
    assert stats["adapter_error"] is None and stats["adapter_setting"] == "default"
    assert stats["adapter_format"] == "shadowtab"
    assert EnginePredictor(lambda: torch_engine).model.format.name == "shadowtab"


def test_greedy_equals_generate_of_the_peft_model(
    torch_engine: TorchEngine, base_engine: TorchEngine, converted: Path, peft_dir: Path
) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    rendered, _ = typing_prompt()
    base = AutoModelForCausalLM.from_pretrained(str(converted), dtype=torch.float32)
    model = PeftModel.from_pretrained(base, str(peft_dir)).eval()  # peft's own loading
    tokenizer = AutoTokenizer.from_pretrained(str(converted))
    ids = torch.tensor([torch_engine.tokenize(rendered.prompt, special=True)])
    with torch.inference_mode():
        out = model.generate(input_ids=ids, max_new_tokens=TOKENS, do_sample=False, pad_token_id=0)
    theirs = [int(t) for t in out[0, ids.shape[1] :]]
    end = tokenizer.eos_token_id
    theirs = theirs[: theirs.index(end)] if end in theirs else theirs
    torch_engine.clear_cache()
    ours = greedy(torch_engine, rendered.prompt)
    assert ours.token_ids == theirs
    assert greedy(base_engine, rendered.prompt).token_ids != ours.token_ids  # the adapter acts


def test_copying_a_window_close_to_llama_cpp(
    torch_engine: TorchEngine, engine: LlamaCppEngine, base_engine: TorchEngine
) -> None:
    rendered, stop = copy_prompt()
    assert engine.stats()["adapter"] == str(packaged_adapter())  # the same adapter, on Q4_1
    room = len(engine.tokenize(rendered.draft, special=True)) + 16
    on_torch = greedy(torch_engine, rendered.prompt, stop, room).texts[0]
    on_llama = greedy(engine, rendered.prompt, stop, room).texts[0]
    across, copied = similarity(on_torch, on_llama), similarity(on_torch, rendered.draft)
    print(f"copy window: torch~llama.cpp {across:.3f}, torch~draft {copied:.3f}")
    assert across >= COPY_SIMILARITY, (across, on_torch, on_llama)
    base_copy = similarity(
        greedy(base_engine, rendered.prompt, stop, room).texts[0], rendered.draft
    )
    assert copied > base_copy  # the adapter copies the window; the base model does not


def test_the_exported_peft_directory(peft_dir: Path, torch_engine: TorchEngine) -> None:
    config = json.loads((peft_dir / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"], config["peft_type"]) == (8, 16, "LORA")
    assert sorted(config["target_modules"]) == sorted(
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    assert (peft_dir / "adapter_model.safetensors").stat().st_size > 1_000_000
    served = torch_with(torch_engine.loaded_model_path, str(peft_dir))
    try:
        assert served.stats()["adapter_format"] == "shadowtab"  # from shadowtab-adapter.json
        rendered, _ = typing_prompt()
        assert (
            greedy(served, rendered.prompt).token_ids
            == greedy(torch_engine, rendered.prompt).token_ids
        )
    finally:
        served.close()


@pytest.mark.parametrize("damage", [*DAMAGES, "peft_wrong_shape", "unknown_format"])
def test_a_bad_adapter_is_named_and_the_base_model_serves(
    damage: str, tmp_path: Path, converted: Path, base_engine: TorchEngine, peft_dir: Path
) -> None:
    from shadowtab.inference.next_edit.formats import FORMATS

    if damage == "peft_wrong_shape":
        path = _peft_wrong_shape(peft_dir, tmp_path / "wrong-peft")
    elif damage == "unknown_format":
        path = write_adapter(tmp_path / "odd.lora.gguf", prompt_format="no-such-format")
    else:
        path = damaged_adapter(tmp_path, damage)
    served = torch_with(converted, str(path), adapter_formats=tuple(FORMATS))
    try:
        stats = served.stats()
        assert stats["state"] == "ready"
        assert stats["adapter"] is None and stats["adapter_format"] is None
        assert "engine.adapter" in stats["adapter_error"] and str(path) in stats["adapter_error"]
        assert "base model" in stats["adapter_error"]
        rendered, _ = typing_prompt()
        assert (
            greedy(served, rendered.prompt).token_ids
            == greedy(base_engine, rendered.prompt).token_ids
        )
    finally:
        served.close()


def test_a_random_gguf_adapter_changes_the_output(
    tmp_path: Path, converted: Path, base_engine: TorchEngine
) -> None:
    path = write_adapter(tmp_path / "random.lora.gguf", scale=0.05)
    served = torch_with(converted, str(path))
    try:
        assert served.stats()["adapter"] == str(path)
        rendered, _ = typing_prompt()
        assert (
            greedy(served, rendered.prompt).token_ids
            != greedy(base_engine, rendered.prompt).token_ids
        )
    finally:
        served.close()


def test_default_on_another_model_is_no_adapter(base_engine: TorchEngine, converted: Path) -> None:
    """The packaged adapter was trained for the packaged model: a configured model gets
    none by default (the converted directory counts as configured)."""
    served = torch_with(converted, "default")
    try:
        assert served.stats()["adapter"] is None and served.stats()["adapter_error"] is None
    finally:
        served.close()


def _peft_wrong_shape(source: Path, target: Path) -> Path:
    """The exported directory with one A matrix too wide for the model."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    target.mkdir()
    for name in ("adapter_config.json", "shadowtab-adapter.json"):
        (target / name).write_text((source / name).read_text())
    weights = load_file(str(source / "adapter_model.safetensors"))
    key = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
    weights[key] = np.zeros((weights[key].shape[0], 1152), dtype=np.float32)
    save_file(weights, str(target / "adapter_model.safetensors"))
    return target
