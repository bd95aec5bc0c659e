"""The exported GGUF adapter loads in llama.cpp, changes its output, and computes what
the same adapter computes in transformers (names, A/B orientation, q/k permutation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from training_support import needs_train_extra, random_adapter

pytestmark = needs_train_extra

PROMPT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
RANK, ALPHA = 4, 8.0


def llama_logits(model: str, tokens: list[int], adapter: Path | None) -> np.ndarray:
    import llama_cpp
    from shadowtab.inference.engines.llama_cpp.extra_buffers import (
        use_plain_buffers_in_llama_class,
    )

    use_plain_buffers_in_llama_class()  # as the engine loads weights
    llm = llama_cpp.Llama(
        model,
        n_ctx=256,
        n_threads=2,
        verbose=False,
        logits_all=True,
        lora_path=None if adapter is None else str(adapter),
    )
    llm.eval(tokens)
    logits = np.array(llm.scores[len(tokens) - 1], dtype=np.float64)
    llm.close()
    return logits


def hf_logits(tokens: list[int], adapter: dict | None) -> np.ndarray:
    import torch

    from training.base_model import load_model
    from training.lora import AdapterShape, attach, load_adapter_state

    model = load_model()
    if adapter is not None:
        model = attach(model, AdapterShape(RANK, ALPHA, "all"))
        load_adapter_state(model, adapter)
    with torch.no_grad():
        out = model(input_ids=torch.tensor([tokens])).logits[0, -1]
    return out.double().numpy()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    from training.export import write_adapter

    adapter = random_adapter(RANK, range(30), scale=0.05)
    path = tmp_path_factory.mktemp("adapter") / "test.lora.gguf"
    return write_adapter(path, adapter, ALPHA, "test adapter"), adapter


def test_adapter_metadata(exported: tuple[Path, dict]) -> None:
    import gguf

    reader = gguf.GGUFReader(str(exported[0]))
    fields = {
        name: reader.fields[name] for name in ("general.type", "adapter.type", "adapter.lora.alpha")
    }
    assert bytes(fields["general.type"].parts[-1]).decode() == "adapter"
    assert bytes(fields["adapter.type"].parts[-1]).decode() == "lora"
    assert float(fields["adapter.lora.alpha"].parts[-1][0]) == ALPHA
    names = {tensor.name: tuple(tensor.shape) for tensor in reader.tensors}
    # GGUF lists dims innermost first: lora_a is rank x in, lora_b out x rank in torch order
    assert names["blk.0.attn_q.weight.lora_a"] == (576, RANK)
    assert names["blk.0.attn_k.weight.lora_b"] == (RANK, 192)
    assert names["blk.29.ffn_down.weight.lora_a"] == (1536, RANK)
    assert len(names) == 30 * 7 * 2


def test_llama_cpp_applies_the_same_adapter_as_transformers(exported: tuple[Path, dict]) -> None:
    from training.base_model import load_tokenizer, packaged_gguf

    path, adapter = exported
    tokens = load_tokenizer().prompt_ids(PROMPT)
    model = str(packaged_gguf())
    base_cpp, tuned_cpp = llama_logits(model, tokens, None), llama_logits(model, tokens, path)
    base_hf, tuned_hf = hf_logits(tokens, None), hf_logits(tokens, adapter)
    delta_cpp, delta_hf = tuned_cpp - base_cpp, tuned_hf - base_hf
    assert np.abs(delta_cpp).max() > 1.0  # the adapter changes the output
    correlation = float(np.corrcoef(delta_cpp, delta_hf)[0, 1])
    assert correlation > 0.95, correlation  # a wrong orientation or permutation gives ~0
    assert int(np.argmax(tuned_cpp)) == int(np.argmax(tuned_hf))
