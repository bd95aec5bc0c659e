"""A full-weight model exported by training/export_full.py holds the trained weights
where llama.cpp's converter puts them (names, q/k rope permutation): read back by
transformers' GGUF loader (which undoes the permutation, as it does for the packaged
model) they are the trained weights to within Q8_0 rounding; the untrained ones are
the packaged ones; and llama.cpp loads the file and predicts what transformers does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_training_export import PROMPT, llama_logits
from training_support import needs_train_extra

pytestmark = needs_train_extra
CHANGED = [
    f"model.layers.{layer}.{module}.weight"
    for layer in range(3)
    for module in ("self_attn.q_proj", "self_attn.k_proj", "mlp.down_proj")
]
UNCHANGED = "model.layers.10.self_attn.q_proj.weight"


def test_a_merged_model_holds_the_trained_weights_and_runs_in_llama_cpp(
    tmp_path: Path,
) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from training.base_model import load_model, load_tokenizer
    from training.export_full import write_model

    model = load_model()
    with torch.no_grad():
        generator = torch.Generator().manual_seed(0)
        params = dict(model.named_parameters())
        for name in CHANGED:
            params[name].add_(torch.randn(params[name].shape, generator=generator) * 0.05)
    path = write_model(tmp_path / "merged.gguf", model.state_dict(), "test", set(CHANGED))
    back = dict(
        AutoModelForCausalLM.from_pretrained(str(tmp_path), gguf_file=path.name).named_parameters()
    )
    for name in CHANGED:
        trained, read = params[name].detach(), back[name].detach()
        # Q8_0: blocks of 32 with a scale of max/127; a wrong permutation is off by ~|w|
        assert torch.allclose(read, trained, atol=float(trained.abs().max()) / 127), name
    assert torch.equal(back[UNCHANGED], params[UNCHANGED])  # copied as stored

    tokens = load_tokenizer().prompt_ids(PROMPT)
    with torch.no_grad():
        expected = model(input_ids=torch.tensor([tokens])).logits[0, -1].double().numpy()
    got = llama_logits(str(path), tokens, None)
    assert int(np.argmax(got)) == int(np.argmax(expected))
    assert float(np.corrcoef(got, expected)[0, 1]) > 0.99
