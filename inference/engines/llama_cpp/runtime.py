"""A thin typed layer over llama.cpp's low-level API: one model, one context whose KV cache
gives each sequence its own stream of cells, a reusable batch, logits only where asked for.

A stream per sequence (llama.cpp's `kv_unified = false`): a forward pass attends over its
own sequence's cells only. In a unified cache every pass walks the cells of every resident
sequence, masked or not, so the prompts other places keep cached slowed every pass; and
without them, attention without flash attention is the faster kernel for the short passes
of speculative decoding (docs/MEASUREMENTS.md, 2026-12-08)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import llama_cpp
import numpy as np
import numpy.typing as npt

from ..api import EngineError, ModelLoadError
from ..kv_types import KV_TYPES, KvType
from ..local.runtime import Interrupted
from ..model_files import check_gguf_file
from . import adapter as lora
from .extra_buffers import without_extra_buffers
from .interrupt import ABORTED, PassInterrupt
from .native_log import route_native_logs

route_native_logs()
llama_cpp.llama_backend_init()

F16 = KV_TYPES["f16"]
GGML_TYPES = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0}
FLASH_ATTENTION_TILE = 64  # ggml-cpu's GGML_FA_TILE_Q


@dataclass(frozen=True)
class ModelShape:
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim_k: int
    head_dim_v: int
    n_vocab: int
    n_ctx_train: int

    def kv_bytes_per_token(self, kv: KvType = F16) -> int:
        """K and V for every layer and KV head, in the cache's element type (one row of each
        per layer, as llama.cpp lays them out): GQA/MQA models need proportionally less."""
        k_row = kv.row_bytes(self.n_head_kv * self.head_dim_k)
        v_row = kv.row_bytes(self.n_head_kv * self.head_dim_v)
        return self.n_layer * (k_row + v_row)


@dataclass(frozen=True)
class ContextConfig:
    cells_per_sequence: int  # each sequence's stream of KV cells (llama.cpp pads to 256)
    n_seq_max: int
    n_threads: int
    n_batch: int  # most tokens one decode call may take
    kv: KvType = F16  # the KV cache's element type (K and V alike)
    # None: off, unless the KV type needs it (a quantized V); measured faster off with a
    # stream per sequence
    flash_attention: bool | None = None

    def attention_tile(self) -> int:
        """Query rows from which llama.cpp's CPU flash attention takes its tiled kernel
        (ggml-cpu: an f16 or f32 KV cache, flash attention on); 0 where it never does."""
        if not self.uses_flash_attention() or self.kv.name != "f16":
            return 0
        return FLASH_ATTENTION_TILE

    def uses_flash_attention(self) -> bool:
        if self.flash_attention is None:
            return self.kv.needs_flash_attention
        if not self.flash_attention and self.kv.needs_flash_attention:
            raise EngineError(f"a {self.kv.name} KV cache needs flash attention")
        return self.flash_attention

    def flash_attn_type(self) -> int:
        if self.uses_flash_attention():
            return int(llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED)
        return int(llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED)


def _load_model(path: Path, on_progress: Callable[[float], None] | None) -> ctypes.c_void_p:
    check_gguf_file(path)
    params = without_extra_buffers(llama_cpp.llama_model_default_params())
    params.n_gpu_layers = 0

    def report(progress: float, _user_data: ctypes.c_void_p) -> bool:
        if on_progress is not None:
            on_progress(min(max(float(progress), 0.0), 1.0))
        return True

    callback = llama_cpp.llama_progress_callback(report)
    params.progress_callback = callback
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise ModelLoadError(f"llama.cpp could not load the model (corrupt or truncated?): {path}")
    return model


def _meta_int(model: ctypes.c_void_p, key: str) -> int | None:
    buffer = ctypes.create_string_buffer(64)
    size = llama_cpp.llama_model_meta_val_str(model, key.encode(), buffer, len(buffer))
    if size < 0:
        return None
    try:
        return int(buffer.value.decode())
    except ValueError:
        return None


def _arch(model: ctypes.c_void_p) -> str:
    buffer = ctypes.create_string_buffer(128)
    llama_cpp.llama_model_meta_val_str(model, b"general.architecture", buffer, len(buffer))
    return buffer.value.decode()


def _read_shape(model: ctypes.c_void_p, vocab: ctypes.c_void_p) -> ModelShape:
    n_head = llama_cpp.llama_model_n_head(model)
    default_dim = llama_cpp.llama_model_n_embd(model) // max(n_head, 1)
    arch = _arch(model)
    return ModelShape(
        n_layer=llama_cpp.llama_model_n_layer(model),
        n_head=n_head,
        n_head_kv=llama_cpp.llama_model_n_head_kv(model),
        head_dim_k=_meta_int(model, f"{arch}.attention.key_length") or default_dim,
        head_dim_v=_meta_int(model, f"{arch}.attention.value_length") or default_dim,
        n_vocab=llama_cpp.llama_vocab_n_tokens(vocab),
        n_ctx_train=llama_cpp.llama_model_n_ctx_train(model),
    )


class LlamaRuntime:
    """Owns the native model, context and batch. Not thread-safe: the engine serializes."""

    def __init__(self, model_path: Path, on_progress: Callable[[float], None] | None):
        self.model_path = model_path
        model = _load_model(model_path, on_progress)
        self._model: ctypes.c_void_p | None = model
        self._vocab = llama_cpp.llama_model_get_vocab(model)
        self.shape = _read_shape(model, self._vocab)
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self._vocab))
        self.bos = int(llama_cpp.llama_vocab_bos(self._vocab))
        self.config = ContextConfig(cells_per_sequence=0, n_seq_max=1, n_threads=1, n_batch=1)
        self.pass_tile = 0
        self._ctx: ctypes.c_void_p | None = None
        self._batch: llama_cpp.llama_batch | None = None
        self._adapter: object | None = None  # llama.cpp frees it with the model
        self._interrupt = PassInterrupt()
        self.threads_now = 0

    def open_context(self, config: ContextConfig) -> None:
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = config.cells_per_sequence * config.n_seq_max
        params.n_batch = config.n_batch
        params.n_ubatch = config.n_batch
        params.n_seq_max = config.n_seq_max
        params.n_threads = config.n_threads
        params.n_threads_batch = config.n_threads
        params.kv_unified = False  # a stream per sequence (the module's docstring)
        params.no_perf = True
        params.type_k = params.type_v = GGML_TYPES[config.kv.name]
        params.flash_attn_type = config.flash_attn_type()
        if not self._model:
            raise EngineError("the model is closed")
        ctx = llama_cpp.llama_init_from_model(self._model, params)
        if not ctx:
            raise ModelLoadError("llama.cpp could not create a context (out of memory?)")
        self.config = config
        self.pass_tile = config.attention_tile()
        self.threads_now = config.n_threads
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._batch = llama_cpp.llama_batch_init(config.n_batch, 0, 1)
        # n_ubatch = n_batch: a pass is one micro-batch, all of which an abort removes
        self._interrupt.install(ctx)

    def attach_adapter(
        self, path: Path, scale: float = 1.0, formats: Collection[str] | None = None
    ) -> str | None:
        """Apply a LoRA adapter to every later decode (raises AdapterError); returns
        the prompt format it was trained on, if its file names one."""
        if not self._model or not self._ctx:
            raise EngineError("the llama.cpp context is closed")
        attached = lora.attach(self._model, self._ctx, path, scale, formats)
        self._adapter = attached.handle
        return attached.prompt_format

    def set_threads(self, n_threads: int) -> None:
        """Threads for the next decodes (llama.cpp applies it to the next graph)."""
        if self._ctx and n_threads != self.threads_now:
            llama_cpp.llama_set_n_threads(self._ctx, n_threads, n_threads)
            self.threads_now = n_threads

    @property
    def n_cells(self) -> int:
        """Each sequence's KV cells."""
        return int(llama_cpp.llama_n_ctx_seq(self._ctx)) if self._ctx else 0

    def _require_batch(self) -> llama_cpp.llama_batch:
        if self._batch is None or not self._ctx:
            raise EngineError("the llama.cpp context is closed")
        return self._batch

    def tokenize(self, text: str, add_bos: bool, special: bool = False) -> list[int]:
        """`special`: parse control-token text such as <|im_start|> (prompt templates)."""
        data = text.encode("utf-8")
        capacity = len(data) + 8
        tokens = (llama_cpp.llama_token * capacity)()
        count = llama_cpp.llama_tokenize(
            self._vocab, data, len(data), tokens, capacity, add_bos and self.add_bos, special
        )
        if count < 0:
            raise EngineError(f"tokenization failed ({count})")
        return list(tokens[:count])

    def piece(self, token: int) -> bytes:
        buffer = ctypes.create_string_buffer(64)
        size = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
        if size < 0:  # a longer token (a run of 64+ dashes or spaces): -size bytes
            buffer = ctypes.create_string_buffer(-size)
            size = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, -size, 0, False)
        return buffer.raw[: max(size, 0)]

    def is_end_of_generation(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))

    def is_control(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_control(self._vocab, token))

    def vocab_size(self) -> int:
        return self.shape.n_vocab

    def decode(
        self, tokens: Sequence[int], seq: int, pos0: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        """Evaluate `tokens` at positions pos0.. in `seq`; return the logits rows of the batch
        indexes in `outputs` (ascending), shape (len(outputs), n_vocab), a view valid until
        the next decode."""
        entries = [(token, seq, pos0 + i) for i, token in enumerate(tokens)]
        return self._pass(entries, set(outputs))

    def decode_steps(self, steps: Sequence[tuple[int, int, int]]) -> npt.NDArray[np.float32]:
        """One pass over several sequences: each step is (token, seq, pos), one token of a
        sequence at its next position; the logits row of every step, in order (a view
        valid until the next decode). The weights are read once for all of them."""
        return self._pass(steps, set(range(len(steps))))

    def _pass(
        self, entries: Sequence[tuple[int, int, int]], wanted: set[int]
    ) -> npt.NDArray[np.float32]:
        """Evaluate (token, seq, pos) `entries` in one llama_decode; the logits rows of the
        batch indexes in `wanted`, ascending."""
        count = len(entries)
        if count == 0 or count > self.config.n_batch:
            raise EngineError(f"batch of {count} tokens (limit {self.config.n_batch})")
        batch = self._require_batch()
        batch.n_tokens = count
        for i, (token, seq, pos) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos  # type: ignore[call-overload]  # the stub's type is wrong
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = i in wanted
        status = llama_cpp.llama_decode(self._ctx, batch)
        if status == ABORTED:
            raise Interrupted(f"a pass of {count} tokens was interrupted")
        if status != 0:
            raise EngineError(f"llama_decode failed with status {status}")
        rows = len(wanted)
        if rows == 0:
            return np.empty((0, self.shape.n_vocab), dtype=np.float32)
        pointer = llama_cpp.llama_get_logits(self._ctx)
        return np.ctypeslib.as_array(pointer, shape=(rows, self.shape.n_vocab))

    def interruptible(self, owner: object | None = None) -> AbstractContextManager[None]:
        return self._interrupt.armed(owner)

    def interrupt(self, owner: object | None = None) -> None:
        self._interrupt.interrupt(owner)

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None:
        if not llama_cpp.llama_memory_seq_rm(self._memory, seq, start, end):
            raise EngineError(f"could not trim sequence {seq} at {start}")

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        """`dst` holds `src`'s first `end` positions. Between streams llama.cpp copies only
        whole ones (a partial copy aborts the process): the whole stream, then the tail
        trimmed. The copy itself runs at the start of the next decode."""
        llama_cpp.llama_memory_seq_cp(self._memory, src, dst, -1, -1)
        self.seq_remove(dst, end, -1)

    def kv_bytes_per_token(self) -> int:
        return self.shape.kv_bytes_per_token(self.config.kv)

    def seq_state_bytes(self, seq: int) -> int:
        return int(llama_cpp.llama_state_seq_get_size(self._ctx, seq))

    def close(self) -> None:
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
        if self._model:
            llama_cpp.llama_model_free(self._model)
            self._model = None
