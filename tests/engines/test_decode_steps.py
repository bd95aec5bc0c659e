"""LlamaRuntime.decode_steps: one pass over several sequences gives each the logits a
pass of its own gives, on the packaged model (benchmarks/batched_decode.py measures what
it saves)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from shadowtab.inference import default_model_path
from shadowtab.inference.engines.api import EngineError
from shadowtab.inference.engines.llama_cpp.runtime import ContextConfig, LlamaRuntime
from shadowtab.inference.engines.local.cpu_load import physical_cores

PROMPTS = (
    "def add(a, b):\n    return",
    "import os\n\nfor name in os.listdir('.'):\n    print(",
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.",
)


@pytest.fixture(scope="module")
def runtime() -> Iterator[LlamaRuntime]:
    instance = LlamaRuntime(default_model_path(), None)
    config = ContextConfig(1024, n_seq_max=4, n_threads=physical_cores(), n_batch=64)
    instance.open_context(config)
    yield instance
    instance.close()


def _prefilled(runtime: LlamaRuntime) -> list[tuple[int, int]]:
    """Each prompt but its last token in a sequence of its own: (last token, its pos)."""
    lasts = []
    for seq, text in enumerate(PROMPTS):
        tokens = runtime.tokenize(text, add_bos=True)
        runtime.seq_remove(seq, 0, -1)
        runtime.decode(tokens[:-1], seq, 0, [])
        lasts.append((tokens[-1], len(tokens) - 1))
    return lasts


def test_one_pass_over_several_sequences_gives_each_its_own_logits(
    runtime: LlamaRuntime,
) -> None:
    lasts = _prefilled(runtime)
    alone = []
    for seq, (token, pos) in enumerate(lasts):
        alone.append(runtime.decode([token], seq, pos, [0])[0].copy())
        runtime.seq_remove(seq, pos, -1)  # as before the pass
    together = runtime.decode_steps([(token, seq, pos) for seq, (token, pos) in enumerate(lasts)])
    assert together.shape == (len(PROMPTS), runtime.vocab_size())
    for seq, row in enumerate(alone):
        assert int(np.argmax(together[seq])) == int(np.argmax(row))
        assert np.allclose(together[seq], row, atol=0.05), seq
    # the next step of each sequence goes on from what the shared pass wrote
    nexts = [int(np.argmax(together[seq])) for seq in range(len(PROMPTS))]
    steps = [(nexts[seq], seq, pos + 1) for seq, (_, pos) in enumerate(lasts)]
    second = runtime.decode_steps(steps).copy()
    runtime.seq_remove(1, lasts[1][1] + 1, -1)
    again = runtime.decode([nexts[1]], 1, lasts[1][1] + 1, [0])[0]
    assert np.allclose(second[1], again, atol=0.05)


def test_an_empty_or_oversized_pass_is_refused(runtime: LlamaRuntime) -> None:
    with pytest.raises(EngineError, match="batch of 0 tokens"):
        runtime.decode_steps([])
    with pytest.raises(EngineError, match="batch of 65 tokens"):
        runtime.decode_steps([(1, 0, pos) for pos in range(65)])
