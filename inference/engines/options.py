"""EngineOptions: what an engine is built with. Every field that is a setting takes its
default from the engine's settings table (settings.py), where its meaning is described:
EngineOptions() is the engine the daemon runs with an empty configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .settings import ENGINE_DEFAULTS, EngineKind, EngineProcess

_D = ENGINE_DEFAULTS


@dataclass
class EngineOptions:
    kind: EngineKind = _D["kind"]
    model_path: str | None = _D["model_path"]
    n_ctx: int = _D["n_ctx"]
    n_threads: int | None = _D["n_threads"]
    kv_cache_mb: float = _D["kv_cache_mb"]
    data_dir: Path | None = None  # where converted models are kept (the daemon's data dir)
    device: str | None = _D["device"]
    base_url: str | None = _D["base_url"]
    server_model: str | None = _D["server_model"]  # engine.model
    api_key: str | None = field(default=_D["api_key"], repr=False)  # else from the env
    timeout_s: float = _D["timeout_s"]
    # openai: a local adapter path is refused (the server applies its own; stats say)
    adapter: str = _D["adapter"]
    weights: str = _D["weights"]
    kv_type: str = _D["kv_type"]
    merge_adapter: bool = _D["merge_adapter"]
    adapter_format: str | None = _D["adapter_format"]
    # The prompt formats the predictor can render: an adapter trained on another is
    # refused (None: no check).
    adapter_formats: tuple[str, ...] | None = None
    process: EngineProcess = _D["process"]

    @property
    def adapter_path(self) -> str | None:
        """The adapter path the setting names, if it names one (for status lines)."""
        return None if self.adapter in ("default", "none", "") else self.adapter
