"""Prefills cut into passes of a tile or more, and short passes padded to the tile
(pass_plan.py): the sizes, and on a scripted model the same logits and KV as passes cut
the plain way, with the padding's cells gone after each pass."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from shadowtab.inference import LlamaCppEngine, default_model_path
from shadowtab.inference.engines.llama_cpp.runtime import ContextConfig, LlamaRuntime
from shadowtab.inference.engines.local.cpu_load import physical_cores
from shadowtab.inference.engines.local.decoding import (
    SequenceWriter,
    prefill_only,
    prefill_with_head,
)
from shadowtab.inference.engines.local.pass_plan import padded_rows, pass_sizes
from test_inference_units import ScriptedRuntime


@pytest.mark.parametrize(
    ("count", "chunk", "tile", "sizes"),
    [
        (150, 128, 64, [75, 75]),  # not 128 + 22: both passes take the tiled kernel
        (129, 128, 64, [65, 64]),
        (300, 128, 64, [100, 100, 100]),
        (100, 128, 64, [100]),
        (40, 128, 64, [40]),
        (100, 64, 64, [64, 36]),  # halves would both be under the tile
        (150, 128, 0, [128, 22]),  # no tile: chunks, the remainder last
        (1, 128, 64, [1]),
        (0, 128, 64, []),
    ],
)
def test_pass_sizes(count: int, chunk: int, tile: int, sizes: list[int]) -> None:
    assert pass_sizes(count, chunk, tile) == sizes
    assert sum(sizes) == count and all(size <= chunk for size in sizes)


def test_passes_most_of_a_tile_long_are_padded_to_it() -> None:
    assert [padded_rows(rows, 64) for rows in (1, 28, 29, 63, 64, 100)] == [
        1,
        28,
        64,
        64,
        64,
        100,
    ]
    assert padded_rows(50, 0) == 50


class TiledRuntime(ScriptedRuntime):
    """A scripted model with a tile: records each pass's length and the KV's peak."""

    def __init__(self, tile: int) -> None:
        super().__init__(lambda tokens: (sum(tokens) * 7 + len(tokens)) % self.vocab)
        self.pass_tile = tile
        self.passes: list[int] = []

    def decode(
        self, tokens: Sequence[int], seq: int, pos: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        self.passes.append(len(tokens))
        return super().decode(tokens, seq, pos, outputs)


PROMPT = [(i * 5) % 60 + 1 for i in range(150)]


def prefilled(tile: int, cached: int, head: list[int]) -> tuple[TiledRuntime, np.ndarray]:
    runtime = TiledRuntime(tile)
    runtime.kv[0] = list(PROMPT[:cached])
    writer = SequenceWriter(runtime, 0, PROMPT[:cached], lambda: None)  # type: ignore[arg-type]
    rows = prefill_with_head(writer, PROMPT, head, 128)
    assert runtime.kv[0] == writer.tokens  # the padding's cells are gone
    return runtime, rows


@pytest.mark.parametrize(("cached", "head"), [(0, []), (100, []), (105, [3, 4, 5]), (1, [7])])
def test_a_tiled_prefill_gives_the_plain_one_s_logits(cached: int, head: list[int]) -> None:
    plain, expected = prefilled(0, cached, head)
    tiled, rows = prefilled(64, cached, head)
    assert np.array_equal(rows, expected)
    assert tiled.kv[0] == plain.kv[0] == PROMPT + head
    assert all(rows >= 64 for rows in tiled.passes) or len(PROMPT) - cached < 29


def test_the_passes_a_prefill_makes() -> None:
    assert prefilled(64, 0, [])[0].passes == [75, 75]
    assert prefilled(64, 100, [])[0].passes == [64]  # 50 tokens, padded
    assert prefilled(64, 125, [])[0].passes == [25]  # too short to pad
    assert prefilled(0, 100, [])[0].passes == [50]


def test_a_warm_is_cut_and_padded_the_same_way() -> None:
    runtime = TiledRuntime(64)
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    prefill_only(writer, PROMPT[:110], 64)
    assert runtime.passes == [64, 64]  # 64, then 46 padded to 64
    assert runtime.kv[0] == writer.tokens == PROMPT[:110]


TEXT = (
    "import os\n\n\ndef sizes(folder):\n    found = {}\n    for name in os.listdir(folder):\n"
    "        path = os.path.join(folder, name)\n        if os.path.isfile(path):\n"
    "            found[name] = os.path.getsize(path)\n    return found\n"
)


def log_softmax(rows: np.ndarray) -> np.ndarray:
    shifted = rows - rows.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def test_the_packaged_model_reads_a_padded_pass_as_a_plain_one() -> None:
    """50 prompt tokens in one pass, padded to 64 rows or not: the same next token, and
    the padding's cells gone (the next pass goes at position 50)."""
    runtime = LlamaRuntime(default_model_path(), None)
    threads = physical_cores()
    config = ContextConfig(512, n_seq_max=2, n_threads=threads, n_batch=128, flash_attention=True)
    runtime.open_context(config)
    try:
        assert runtime.pass_tile == 64  # llama.cpp's flash attention on, an f16 KV
        tokens = runtime.tokenize(TEXT, add_bos=True)
        assert len(tokens) > 52
        found = []
        for seq, rows in ((0, 0), (1, 64)):
            writer = SequenceWriter(runtime, seq, [], lambda: None)
            first = writer.eval(tokens[:50], [49], rows)[0]
            second = writer.eval(tokens[50:52], [0, 1])
            found.append(np.vstack([first, second]))
        plain, padded = (log_softmax(rows) for rows in found)
        # the tiled kernel sums in another order: the same top five, close probabilities
        assert [list(r) for r in np.argsort(-plain)[:, :5]] == [
            list(r) for r in np.argsort(-padded)[:, :5]
        ]
        assert np.abs(np.exp(plain) - np.exp(padded)).max() < 0.05
    finally:
        runtime.close()


def test_with_flash_attention_each_sequence_has_room_for_a_padded_pass() -> None:
    """The tiled kernel's padding rows go after the longest prompt: with flash attention
    on, each sequence's stream holds them; off (the default for an f16 KV), no tile."""
    flash = LlamaCppEngine(n_ctx=256, kv_cache_mb=4, flash_attention=True)
    plain = LlamaCppEngine(n_ctx=256, kv_cache_mb=4)
    try:
        runtime = flash._ready()[0]
        assert runtime.pass_tile == 64 and runtime.n_cells >= 256 + 64
        assert plain._ready()[0].pass_tile == 0
    finally:
        flash.close()
        plain.close()
