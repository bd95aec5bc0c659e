"""training/export.py writes a GGUF LoRA; the engines' reader (inference/engines/
gguf_lora.py, which cannot import training/) gives back exactly the peft tensors it was
written from: names, A/B orientation and the q/k row permutation undone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from training_support import needs_train_extra, random_adapter

pytestmark = needs_train_extra
RANK, ALPHA = 4, 8.0
N_HEAD, N_HEAD_KV = 9, 3  # SmolLM2-135M, as training/export.py assumes


def test_export_then_read_gives_back_the_same_tensors(tmp_path: Path) -> None:
    from shadowtab.inference.engines.torch.gguf_lora import read_gguf_lora

    from training.export import write_adapter

    adapter = random_adapter(RANK, range(3), scale=1.0, seed=3)
    path = write_adapter(tmp_path / "round.lora.gguf", adapter, ALPHA, "round trip")
    lora = read_gguf_lora(path, N_HEAD, N_HEAD_KV)
    assert (lora.rank, lora.alpha, lora.prompt_format) == (RANK, ALPHA, "shadowtab")
    assert lora.target_modules == sorted(
        ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    expected = {name.replace(".default.", "."): t.numpy() for name, t in adapter.items()}
    got = lora.peft_state()
    assert sorted(got) == sorted(expected)
    for name, tensor in expected.items():
        assert got[name].dtype == np.float32
        np.testing.assert_array_equal(got[name], tensor, err_msg=name)  # exact, not close


def test_the_file_holds_q_and_k_permuted(tmp_path: Path) -> None:
    """So the exact round trip above needs the reader to undo the permutation."""
    import gguf

    from training.export import write_adapter

    adapter = random_adapter(RANK, range(1), scale=1.0, seed=4)
    path = write_adapter(tmp_path / "perm.lora.gguf", adapter, ALPHA, "permutation")
    stored = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(str(path)).tensors}
    prefix = "base_model.model.model.layers.0.self_attn"
    for kind, module in (("attn_q", "q_proj"), ("attn_k", "k_proj")):
        original = adapter[f"{prefix}.{module}.lora_B.default.weight"].numpy()
        in_file = stored[f"blk.0.{kind}.weight.lora_b"]
        assert in_file.shape == original.shape and not np.array_equal(in_file, original)
    v = adapter[f"{prefix}.v_proj.lora_B.default.weight"].numpy()
    np.testing.assert_array_equal(stored["blk.0.attn_v.weight.lora_b"], v)
