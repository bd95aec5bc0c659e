"""The keys of `shadowtab.toml` and their validation.

A raw table (from a TOML file or from environment variables) is checked key by key
against the schema; every error names the key and where it came from, so a typo never
silently falls back to a default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

EngineKind = Literal["llama.cpp", "torch", "openai", "off"]  # as inference's EngineOptions.kind
ENGINE_KINDS: tuple[str, ...] = get_args(EngineKind)
EngineProcess = Literal["worker", "inline"]  # as inference's EngineOptions.process
# engine.weights: what the packaged model's weights are converted to (llama.cpp), as
# inference's EngineOptions.weights; "auto" measures which is fastest on this CPU (once,
# kept per CPU); "as-is" keeps the packaged Q4_1
WEIGHT_TYPES: tuple[str, ...] = ("auto", "q8_0", "bf16", "f16", "q4_0", "as-is")
# engine.kv_type: the KV cache's element type (llama.cpp), as inference's KV_TYPES
KV_TYPES: tuple[str, ...] = ("f16", "q8_0")


class ConfigError(ValueError):
    """A setting is unknown, of the wrong type or out of range; the message names the
    key and its source (a file path or an environment variable)."""


Check = Callable[[Any], str | None]  # returns a problem description, or None if valid


def _integer(minimum: int) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer, got {_describe(value)}"
        if value < minimum:
            return f"expected an integer >= {minimum}, got {value}"
        return None

    return check


def _string(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"expected a string, got {_describe(value)}"
    return None if value else "expected a non-empty string"


def _engine_kind(value: Any) -> str | None:
    if value not in ENGINE_KINDS:
        return f"expected one of {', '.join(map(repr, ENGINE_KINDS))}, got {_describe(value)}"
    return None


ENGINE_PROCESSES: tuple[str, ...] = get_args(EngineProcess)


def _weights(value: Any) -> str | None:
    if value not in WEIGHT_TYPES:
        return f"expected one of {', '.join(map(repr, WEIGHT_TYPES))}, got {_describe(value)}"
    return None


def _kv_type(value: Any) -> str | None:
    if value not in KV_TYPES:
        return f"expected one of {', '.join(map(repr, KV_TYPES))}, got {_describe(value)}"
    return None


def _engine_process(value: Any) -> str | None:
    if value not in ENGINE_PROCESSES:
        return f"expected one of {', '.join(map(repr, ENGINE_PROCESSES))}, got {_describe(value)}"
    return None


def _device(value: Any) -> str | None:
    if value not in ("cuda", "cpu") and not (isinstance(value, str) and value.startswith("cuda:")):
        return f"expected 'cuda', 'cuda:N' or 'cpu', got {_describe(value)}"
    return None


def _http_url(value: Any) -> str | None:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        return f"expected an http(s) URL such as 'http://host:8000/v1', got {_describe(value)}"
    return None


def _secret(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "expected a non-empty string"  # the value itself is never repeated
    return None


def _string_list(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return f"expected a list of strings, got {_describe(value)}"
    return None


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {_describe(value)}"


def _positive_number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return f"expected a number > 0, got {_describe(value)}"
    return None


# As shadowtab.inference.next_edit.formats.FORMATS, plus "auto" (the adapter's format
# when an adapter is loaded, else generic); kept here so the CLI imports no inference.
NEXT_EDIT_FORMATS = ("auto", "shadowtab", "generic", "sweep", "zeta")


def _next_edit_format(value: Any) -> str | None:
    if value not in NEXT_EDIT_FORMATS:
        return f"expected one of {', '.join(map(repr, NEXT_EDIT_FORMATS))}, got {_describe(value)}"
    return None


def _adapter_format(value: Any) -> str | None:
    named = NEXT_EDIT_FORMATS[1:]  # "auto" is the predictor's, not an adapter's
    if value not in named:
        return f"expected one of {', '.join(map(repr, named))}, got {_describe(value)}"
    return None


def _probability(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return f"expected a number from 0 to 1, got {_describe(value)}"
    return None


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


# section -> key -> check. `linters` is a table of linter names, each a LINTER_KEYS table.
SECTIONS: dict[str, dict[str, Check]] = {
    "engine": {
        "kind": _engine_kind,
        "process": _engine_process,  # "worker" (default): the model in a child process
        "model_path": _string,
        "context_size": _integer(256),
        "threads": _integer(1),
        "kv_cache_mb": _integer(1),
        "device": _device,  # torch
        "adapter_path": _string,  # deprecated: read as engine.adapter (see config.py)
        "base_url": _http_url,  # openai
        "model": _string,  # openai: the served model's name
        "api_key": _secret,  # openai; or SHADOWTAB_OPENAI_API_KEY / OPENAI_API_KEY
        "timeout_s": _positive_number,  # openai
        "adapter": _string,  # "default" | "none" | a GGUF LoRA file or a peft directory
        "weights": _weights,  # llama.cpp, the packaged model: the type it is converted to
        "kv_type": _kv_type,  # llama.cpp: the KV cache's element type
        "merge_adapter": _boolean,  # llama.cpp: the adapter merged into converted weights
        "adapter_format": _adapter_format,  # openai: the served adapter's prompt format
    },
    "debounce": {
        "lint_ms": _integer(0),
        "warm_ms": _integer(0),
    },
    "limits": {
        "document_mb": _positive_number,
        "prediction_wait_s": _positive_number,
    },
    "next_edit": {
        "format": _next_edit_format,
        "min_confidence": _probability,
    },
}
# The fields of shadow_workspace.LinterSpec.from_dict, plus `enabled` (false drops a
# default linter such as "ruff").
LINTER_KEYS: dict[str, Check] = {
    "command": _string_list,
    "output_format": _string,
    "languages": _string_list,
    "extensions": _string_list,
    "timeout_s": _positive_number,
    "pattern": _string,
    "enabled": _boolean,
}
LINTER_REQUIRED = ("output_format",)


def env_boolean(text: str) -> bool:
    """An environment variable's true/false: 1/true/yes/on or 0/false/no/off."""
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false (1/0), got {text!r}")


@dataclass(frozen=True)
class EnvKey:
    """An environment variable that overrides one `section.key`."""

    section: str
    key: str
    parse: Callable[[str], Any]


ENV_KEYS: dict[str, EnvKey] = {
    "SHADOWTAB_ENGINE_KIND": EnvKey("engine", "kind", str),
    "SHADOWTAB_ENGINE_PROCESS": EnvKey("engine", "process", str),
    "SHADOWTAB_MODEL_PATH": EnvKey("engine", "model_path", str),
    "SHADOWTAB_CONTEXT_SIZE": EnvKey("engine", "context_size", int),
    "SHADOWTAB_THREADS": EnvKey("engine", "threads", int),
    "SHADOWTAB_KV_CACHE_MB": EnvKey("engine", "kv_cache_mb", int),
    "SHADOWTAB_DEVICE": EnvKey("engine", "device", str),
    "SHADOWTAB_ADAPTER_PATH": EnvKey("engine", "adapter_path", str),
    "SHADOWTAB_OPENAI_BASE_URL": EnvKey("engine", "base_url", str),
    "SHADOWTAB_OPENAI_MODEL": EnvKey("engine", "model", str),
    "SHADOWTAB_OPENAI_API_KEY": EnvKey("engine", "api_key", str),
    "SHADOWTAB_ADAPTER": EnvKey("engine", "adapter", str),
    "SHADOWTAB_WEIGHTS": EnvKey("engine", "weights", str),
    "SHADOWTAB_KV_TYPE": EnvKey("engine", "kv_type", str),
    "SHADOWTAB_MERGE_ADAPTER": EnvKey("engine", "merge_adapter", env_boolean),
    "SHADOWTAB_ADAPTER_FORMAT": EnvKey("engine", "adapter_format", str),
    "SHADOWTAB_LINT_DEBOUNCE_MS": EnvKey("debounce", "lint_ms", int),
    "SHADOWTAB_WARM_DEBOUNCE_MS": EnvKey("debounce", "warm_ms", int),
    "SHADOWTAB_MAX_DOCUMENT_MB": EnvKey("limits", "document_mb", float),
    "SHADOWTAB_PREDICTION_WAIT_S": EnvKey("limits", "prediction_wait_s", float),
}


def validate_table(table: Mapping[str, Any], source: str) -> None:
    """Raise ConfigError for the first unknown key or bad value in a parsed TOML file."""
    for section, body in table.items():
        if section == "linters":
            _validate_linters(body, source)
            continue
        if section not in SECTIONS:
            known = ", ".join([*SECTIONS, "linters"])
            raise ConfigError(f"{source}: unknown section [{section}] (known: {known})")
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: '{section}' must be a table [{section}]")
        _validate_keys(section, body, SECTIONS[section], source)


def _validate_keys(
    prefix: str, body: Mapping[str, Any], checks: Mapping[str, Check], source: str
) -> None:
    for key, value in body.items():
        check = checks.get(key)
        if check is None:
            known = ", ".join(checks)
            raise ConfigError(f"{source}: unknown key '{prefix}.{key}' (known: {known})")
        problem = check(value)
        if problem:
            raise ConfigError(f"{source}: key '{prefix}.{key}': {problem}")


def _validate_linters(body: Any, source: str) -> None:
    if not isinstance(body, dict):
        raise ConfigError(f"{source}: 'linters' must be a table of linters [linters.NAME]")
    for name, spec in body.items():
        prefix = f"linters.{name}"
        if not isinstance(spec, dict):
            raise ConfigError(f"{source}: '{prefix}' must be a table [{prefix}]")
        _validate_keys(prefix, spec, LINTER_KEYS, source)
        if spec.get("enabled", True) is False:
            continue
        for key in LINTER_REQUIRED:
            if key not in spec:
                raise ConfigError(f"{source}: '{prefix}' is missing the key '{key}'")


def table_from_env(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The overrides set in the environment, as a table shaped like the TOML file."""
    table: dict[str, dict[str, Any]] = {}
    for name, env_key in ENV_KEYS.items():
        raw = environ.get(name)
        if raw is None:
            continue
        try:
            value = env_key.parse(raw)
        except ValueError:
            expected = "true or false (1/0)" if env_key.parse is env_boolean else "an integer"
            raise ConfigError(
                f"environment variable {name}: key '{env_key.section}.{env_key.key}': "
                f"expected {expected}, got {raw!r}"
            ) from None
        problem = SECTIONS[env_key.section][env_key.key](value)
        if problem:
            raise ConfigError(
                f"environment variable {name}: key '{env_key.section}.{env_key.key}': {problem}"
            )
        table.setdefault(env_key.section, {})[env_key.key] = value
    return table
