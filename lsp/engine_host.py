"""Owns the engine and tracks its state for status and progress. By default the engine
runs in a supervised worker process (inference.engines.worker.WorkerEngine): a crash
there shows here as a reload ("loading" with progress), never as a dead daemon. With
`engine.process = "inline"` it is loaded in a background thread of this process."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shadowtab.inference.next_edit.settings import NextEditOptions

if TYPE_CHECKING:
    from shadowtab.inference import Engine, EngineOptions
    from shadowtab.inference.engines.worker import WorkerEngine, WorkerPolicy
    from shadowtab.inference.next_edit.predictor import EnginePredictor, Predictor

logger = logging.getLogger(__name__)


class EngineHost:
    """Owns the engine: state "off" | "loading" | "ready" | "failed", load progress 0..1."""

    def __init__(
        self,
        options: EngineOptions,
        next_edit: NextEditOptions | None = None,
        predictor: Predictor | None = None,
        worker_policy: WorkerPolicy | None = None,
    ) -> None:
        """`next_edit` configures the default predictor (None: the table's defaults);
        `predictor`, when given, replaces it."""
        self.options = options
        self.next_edit = next_edit or NextEditOptions()
        self.worker_policy = worker_policy
        self._state = "off" if options.kind == "off" else "loading"
        self._progress = 0.0
        self._error: str | None = None
        self.engine: Engine | None = None
        self.worker: WorkerEngine | None = None  # set when the engine runs in a worker
        self._explicit_predictor = predictor
        self._default_predictor: EnginePredictor | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def predictor(self) -> Predictor | None:
        """The predictor given in HubOptions, else the product's (`engine_predictor`) over
        this engine."""
        if self._explicit_predictor is not None:
            return self._explicit_predictor
        if self.options.kind == "off":
            return None
        if self._default_predictor is None:
            from shadowtab.inference.next_edit.predictor import engine_predictor

            self._default_predictor = engine_predictor(self.get_engine, self.next_edit)
        return self._default_predictor

    def peek_predictor(self) -> Predictor | None:
        """The predictor if one exists already (never builds one)."""
        return self._explicit_predictor or self._default_predictor

    @property
    def uses_worker(self) -> bool:
        return self.options.kind != "off" and self.options.process != "inline"

    @property
    def state(self) -> str:
        """ "off" | "loading" | "ready" | "failed"; a worker restarting shows "loading"."""
        if self.worker is not None:
            state = self.worker.state
            return "off" if state == "closed" else state
        return self._state

    @property
    def progress(self) -> float:
        return self.worker.progress if self.worker is not None else self._progress

    @property
    def error(self) -> str | None:
        return self.worker.error if self.worker is not None else self._error

    def get_engine(self) -> Engine | None:
        return self.engine if self.state == "ready" else None

    def start(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[], None]) -> None:
        if self._state != "loading" or self._thread is not None or self.worker is not None:
            return

        def notify() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(on_change)

        if self.uses_worker:
            self._start_worker(notify)
            return
        self._thread = threading.Thread(
            target=self._load, args=(notify,), name="shadowtab-engine-load", daemon=True
        )
        self._thread.start()

    def _start_worker(self, notify: Callable[[], None]) -> None:
        from shadowtab.inference.engines.worker import WorkerEngine

        with self._lock:
            if self._closed:
                return
            self.worker = WorkerEngine(self.options, self.worker_policy, on_change=notify)
            self.engine = self.worker

    def _load(self, notify: Callable[[], None]) -> None:
        from shadowtab.inference import create_engine
        from shadowtab.inference.engines.load_failure import describe_load_failure

        def on_progress(fraction: float) -> None:
            self._progress = max(0.0, min(1.0, float(fraction)))
            notify()

        try:
            engine = create_engine(self.options, on_progress=on_progress)
        except Exception as exc:  # any load failure is reported, never raised into the loop
            logger.exception("engine failed to load")
            self._error = describe_load_failure(exc)
            self._state = "failed"
        else:
            with self._lock:
                if self._closed:
                    engine.close()
                    return
                self.engine = engine
                self._progress = 1.0
                self._state = "ready"
        notify()

    def status(self) -> dict[str, Any]:
        """State, and which engine runs where: kind, device, model, adapter (never a key)."""
        options = self.options
        described = self._described()
        return {
            "state": self.state,
            "progress": self.progress,
            "error": self.error,
            "kind": options.kind,
            "device": described.get("device") or _device_setting(options),
            "model": described.get("model") or _model_setting(options),
            "weights": described.get("weights"),  # llama.cpp: what the weights became
            # engine.weights = "auto": the measurement that chose them
            "weights_choice": described.get("weights_choice"),
            "kv_type": described.get("kv_type"),  # llama.cpp: the KV cache's element type
            "context_cells": described.get("context_cells"),  # within trained_context
            "trained_context": described.get("trained_context"),
            "threads": described.get("threads_now"),  # llama.cpp: in use, fewer under load
            "threads_max": described.get("n_threads"),  # one per core, or engine.threads
            "threads_adaptive": described.get("threads_adaptive"),
            "others_busy_cores": described.get("other_processes_busy_cores"),
            "adapter": described.get("adapter") or options.adapter_path,
            "adapter_error": described.get("adapter_error"),  # why it is not in use
            "adapter_format": described.get("adapter_format"),  # the prompt format it names
            "adapter_merged": described.get("adapter_merged"),  # in the weights (llama.cpp)
            "process": self._process_kind(),
            "worker": self.worker.worker_status() if self.worker is not None else None,
            **self._gate_states(),
        }

    def _gate_states(self) -> dict[str, str | None]:
        """The product predictor's learned gates: in use, or why not (None: no such
        predictor: engine off, or one given in HubOptions)."""
        if self._explicit_predictor is not None or self.predictor is None:
            return {"ghost_gate": None, "propagation_gate": None}
        predictor = self._default_predictor
        assert predictor is not None  # built by self.predictor
        return {
            "ghost_gate": predictor.ghost_gate_state,
            "propagation_gate": predictor.propagation_gate_state,
        }

    def _process_kind(self) -> str:
        if self.options.kind == "off":
            return "none"
        return "worker" if self.uses_worker else "inline"

    def _described(self) -> dict[str, Any]:
        engine = self.get_engine()
        if engine is None:
            return {}
        try:
            return engine.stats()
        except Exception:  # status must answer even when an engine misbehaves
            return {}

    def stats(self) -> dict[str, Any]:
        engine = self.get_engine()
        data = self.status()
        if engine is not None:
            try:
                data["engine_stats"] = engine.stats()
            except Exception as exc:
                data["engine_stats_error"] = str(exc)
        return data

    def close(self) -> None:
        with self._lock:
            self._closed = True
            engine, self.engine = self.engine, None
        if engine is not None:
            engine.close()
        if self.worker is not None and self.worker is not engine:
            self.worker.close()


def _device_setting(options: EngineOptions) -> str | None:
    if options.kind == "openai":
        return f"server {options.base_url}"
    if options.kind == "torch":
        return options.device or "auto"
    return None if options.kind == "off" else "cpu"


def _model_setting(options: EngineOptions) -> str | None:
    if options.kind == "off":
        return None
    if options.kind == "openai":
        return options.model or "the server's first model"
    return options.model_path or "default"
