"""EngineOptions: what an engine is built with. Each field that is a setting is named as
its `[engine]` key and takes its default from the engine's settings table (settings.py),
where its meaning is described: EngineOptions() is the engine the daemon runs with an
empty configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .settings import ENGINE_DEFAULTS, EngineKind, EngineProcess

_D = ENGINE_DEFAULTS


@dataclass
class EngineOptions:
    kind: EngineKind = _D["kind"]
    model_path: str | None = _D["model_path"]
    context_size: int = _D["context_size"]
    threads: int | None = _D["threads"]
    kv_cache_mb: float = _D["kv_cache_mb"]
    data_dir: Path | None = None  # where converted models are kept (the daemon's data dir)
    device: str | None = _D["device"]
    base_url: str | None = _D["base_url"]
    model: str | None = _D["model"]  # openai: the served model's name
    api_key: str | None = field(default=_D["api_key"], repr=False)  # else from the env
    timeout_s: float = _D["timeout_s"]
    # openai: a local adapter path is refused (the server applies its own; stats say)
    adapter: str = _D["adapter"]
    weights: str = _D["weights"]
    kv_type: str = _D["kv_type"]
    merge_adapter: bool = _D["merge_adapter"]
    # a prompt format name, so its row is the predictor's (next_edit/settings.py); unset
    adapter_format: str | None = None
    # The prompt formats the predictor can render: an adapter trained on another is
    # refused (None: no check).
    adapter_formats: tuple[str, ...] | None = None
    process: EngineProcess = _D["process"]

    @property
    def adapter_path(self) -> str | None:
        """The adapter path the setting names, if it names one (for status lines)."""
        return None if self.adapter in ("default", "none", "") else self.adapter
