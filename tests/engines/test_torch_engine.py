"""TorchEngine specifics: greedy output equals transformers' own greedy generate on the same
model, the GGUF conversion is cached in the data dir, a peft LoRA adapter changes the
output, bad model paths get errors naming the setting, and the GPU path when one is here
(the packaged GGUF adapter on torch: test_torch_adapter.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inference_samples import CLASS, FIB
from shadowtab.inference import ModelLoadError

if TYPE_CHECKING:
    from shadowtab.inference.engines.torch.engine import TorchEngine


@pytest.mark.parametrize("prompt", [FIB, CLASS], ids=["fib", "class"])
def test_greedy_equals_transformers_generate(torch_engine: TorchEngine, prompt: str) -> None:
    import torch

    torch_engine.clear_cache()  # cold: one prefill pass like generate's
    ours = torch_engine.rewrite(prompt, "x", 16, speculative=False)
    runtime, _ = torch_engine._ready()  # white box: the very model the engine runs
    model, tokenizer = runtime.model, runtime.tokenizer
    ids = tokenizer(prompt, return_tensors="pt").input_ids
    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=16, do_sample=False, pad_token_id=0)
    theirs = [int(t) for t in out[0, ids.shape[1] :]]
    eos = set(runtime._eog)
    theirs = theirs[: next((i for i, t in enumerate(theirs) if t in eos), len(theirs))]
    assert ours.token_ids == theirs
    assert ours.texts[0] == tokenizer.decode(theirs)


def test_conversion_is_cached_so_the_second_start_reads_it(
    torch_engine: TorchEngine, torch_models_dir: Path
) -> None:
    from shadowtab.inference.engines.torch.engine import TorchEngine

    converted = torch_engine.loaded_model_path
    assert converted.parent == torch_models_dir / "models" / "torch"
    assert (converted / "model.safetensors").exists() and (converted / "config.json").exists()
    made = (converted / "model.safetensors").stat().st_mtime_ns
    second = TorchEngine(n_ctx=256, kv_cache_mb=4, data_dir=torch_models_dir)
    try:
        assert second.loaded_model_path == converted
        assert (converted / "model.safetensors").stat().st_mtime_ns == made
        assert not [p for p in converted.parent.iterdir() if p.name.startswith(".partial")]
        assert second.stats()["device"] in ("cpu", "cuda")
    finally:
        second.close()


def test_lora_adapter_through_peft(torch_engine: TorchEngine, tmp_path: Path) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from shadowtab.inference.engines.torch.engine import TorchEngine
    from transformers import AutoModelForCausalLM

    base_dir = torch_engine.loaded_model_path
    base = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype=torch.float32)
    config = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    torch.manual_seed(0)
    get_peft_model(base, config).save_pretrained(str(tmp_path / "adapter"))
    tuned = TorchEngine(
        model_path=base_dir, n_ctx=256, kv_cache_mb=4, adapter=str(tmp_path / "adapter")
    )
    plain = TorchEngine(model_path=base_dir, n_ctx=256, kv_cache_mb=4, n_threads=2)
    try:
        assert tuned.stats()["adapter"] == str(tmp_path / "adapter")
        assert tuned.stats()["adapter_format"] is None  # a plain peft directory names none
        assert plain.stats()["adapter"] is None  # "default" on a configured model: none
        untuned = plain.rewrite(FIB, "x", 8, speculative=False)
        assert tuned.rewrite(FIB, "x", 8, speculative=False).token_ids != untuned.token_ids
    finally:
        tuned.close()
        plain.close()


def test_bad_model_paths_name_the_setting(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from shadowtab.inference.engines.torch.engine import TorchEngine

    with pytest.raises(ModelLoadError, match=r"not found.*engine\.model_path"):
        TorchEngine(model_path=tmp_path / "missing")
    empty = tmp_path / "no-weights"
    empty.mkdir()
    (empty / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ModelLoadError, match="has no weights"):
        TorchEngine(model_path=empty)
    other = tmp_path / "model.bin"
    other.write_bytes(b"PK\x03\x04 not a model" * 8)
    with pytest.raises(ModelLoadError, match="neither a Hugging Face model directory nor a GGUF"):
        TorchEngine(model_path=other)


def test_gguf_architecture_transformers_cannot_load(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the torch extra is not installed")
    gguf = pytest.importorskip("gguf", reason="the torch extra is not installed")
    import numpy as np
    from shadowtab.inference.engines.torch.engine import TorchEngine

    path = tmp_path / "strange.gguf"
    writer = gguf.GGUFWriter(str(path), "no-such-architecture")
    writer.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelLoadError, match=r'transformers cannot load the GGUF.*"llama\.cpp"'):
        TorchEngine(model_path=path, data_dir=tmp_path)


def test_on_a_gpu(torch_models_dir: Path) -> None:
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: the GPU path runs where one is present")
    from shadowtab.inference.engines.torch.engine import TorchEngine

    gpu = TorchEngine(n_ctx=1024, kv_cache_mb=64, data_dir=torch_models_dir, device="cuda")
    try:
        assert gpu.stats()["device"].startswith("cuda")
        plain = gpu.rewrite(FIB, "x", 24, speculative=False)
        fast = gpu.rewrite(FIB, plain.texts[0], 24)
        assert fast.texts == plain.texts and fast.stats.accepted_draft_tokens > 0
        many = gpu.complete(FIB, 8, n=3)
        assert len(many.texts) >= 2
    finally:
        gpu.close()
