"""The keys of `shadowtab.toml`: one table of settings, and their validation.

SETTINGS is the engine's table (inference/engines/settings.py) plus the daemon's and the
language server's settings below. The config loader (config.py), validation, the
environment variables, `daemon status` and the configuration reference
(`shadowtab config --reference`) all derive from it. A new setting is one row here (or,
for an `[engine]` key, in the engine's table: its EngineOptions field too) and its field
in Settings (config.py); every row here is also a HubOptions field (lsp/hub.py), which
Settings.hub_options() fills in. tests/daemon/test_settings_table.py checks all of them.

A raw table (from a TOML file or from environment variables) is checked key by key; every
error names the key and where it came from, so a typo never silently falls back to a
default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shadowtab.inference.engines import setting_types as checks
from shadowtab.inference.engines.setting_types import Check, Setting, env_boolean
from shadowtab.inference.engines.settings import (
    ENGINE_KINDS,
    ENGINE_PROCESSES,
    ENGINE_SETTINGS,
    EngineKind,
    EngineProcess,
    adapter_formats,
)
from shadowtab.inference.next_edit.token_confidence import DEFAULT_TOKEN_THRESHOLD
from shadowtab.shadow_workspace.disk import MAX_DOCUMENT_BYTES
from shadowtab.shadow_workspace.linting import DEFAULT_LINT_MAX_MB

__all__ = [
    "ENGINE_KINDS",
    "ENGINE_PROCESSES",
    "ENV_SETTINGS",
    "SECTIONS",
    "SETTINGS",
    "ConfigError",
    "EngineKind",
    "EngineProcess",
    "env_boolean",
    "table_from_env",
    "validate_table",
]


class ConfigError(ValueError):
    """A setting is unknown, of the wrong type or out of range; the message names the
    key and its source (a file path or an environment variable)."""


def next_edit_formats() -> tuple[str, ...]:
    """`[next_edit] format`: "auto" (the adapter's format when an adapter is loaded, else
    generic) or one of next_edit's formats."""
    return ("auto", *adapter_formats())


# The daemon's and the language server's settings (their `field` is also HubOptions').
DAEMON_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "debounce.lint_ms",
        150,
        "integer >= 0",
        "Pause in typing, in ms, before the document is linted again.",
        checks.integer(0),
        "lint_debounce_ms",
        env="SHADOWTAB_LINT_DEBOUNCE_MS",
        parse_env=int,
    ),
    Setting(
        "debounce.warm_ms",
        100,
        "integer >= 0",
        "Pause in typing, in ms, before the model's cache is warmed with the next prompt.",
        checks.integer(0),
        "warm_debounce_ms",
        env="SHADOWTAB_WARM_DEBOUNCE_MS",
        parse_env=int,
    ),
    Setting(
        "limits.document_mb",
        MAX_DOCUMENT_BYTES / 2**20,
        "number > 0",
        "Larger documents are refused with a message: no suggestions, no lock.",
        checks.positive_number,
        "max_document_mb",
        env="SHADOWTAB_MAX_DOCUMENT_MB",
        parse_env=float,
    ),
    Setting(
        "limits.lint_mb",
        DEFAULT_LINT_MAX_MB,
        "number > 0",
        "Larger documents (in M characters) are not linted: their lint would cost seconds "
        "of CPU per pause in typing. `daemon status` lists the documents skipped.",
        checks.positive_number,
        "lint_max_mb",
        env="SHADOWTAB_LINT_MAX_MB",
        parse_env=float,
    ),
    Setting(
        "limits.prediction_wait_s",
        10.0,
        "number > 0",
        "A prediction still waiting for the model after this many seconds is dropped "
        "(answered ContentModified).",
        checks.positive_number,
        "prediction_wait_s",
        env="SHADOWTAB_PREDICTION_WAIT_S",
        parse_env=float,
    ),
    Setting(
        "next_edit.format",
        "auto",
        "auto or a prompt format name",
        "The next-edit prompt format: auto (the adapter's when an adapter is loaded, else "
        "generic), shadowtab, generic, sweep or zeta.",
        checks.one_of(next_edit_formats),
        "next_edit_format",
    ),
    Setting(
        "next_edit.min_confidence",
        0.0,
        "number from 0 to 1",
        "Suggestions the predictor is less sure of than this are not shown.",
        checks.probability,
        "min_confidence",
    ),
    Setting(
        "next_edit.token_threshold",
        DEFAULT_TOKEN_THRESHOLD,
        "number from 0 to 1",
        "Ghost text is cut at the first token the model is less sure of than this, and a "
        "next edit that writes such a token is not shown (0: no cut). Short suggestions "
        "are right far more often than long ones.",
        checks.probability,
        "token_threshold",
    ),
    Setting(
        "next_edit.gate",
        True,
        "boolean",
        "Ghost text's learned gate chooses where to cut a suggestion, or to show none, "
        "with the model it was fitted for (the packaged one); other models, or false, "
        "use next_edit.token_threshold alone.",
        checks.boolean,
        "ghost_gate",
        env="SHADOWTAB_GHOST_GATE",
        parse_env=env_boolean,
    ),
)
SETTINGS: tuple[Setting, ...] = (*ENGINE_SETTINGS, *DAEMON_SETTINGS)
BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}

# section -> key -> check. `linters` is a table of linter names, each a LINTER_KEYS table.
SECTIONS: dict[str, dict[str, Check]] = {}
for _setting in SETTINGS:
    SECTIONS.setdefault(_setting.section, {})[_setting.name] = _setting.check
# SHADOWTAB_* variable -> the setting it overrides
ENV_SETTINGS: dict[str, Setting] = {s.env: s for s in SETTINGS if s.env}

# The fields of shadow_workspace.LinterSpec.from_dict, plus `enabled` (false drops a
# default linter such as "ruff").
LINTER_KEYS: dict[str, Check] = {
    "command": checks.string_list,
    "output_format": checks.string,
    "languages": checks.string_list,
    "extensions": checks.string_list,
    "timeout_s": checks.positive_number,
    "pattern": checks.string,
    "enabled": checks.boolean,
}
LINTER_REQUIRED = ("output_format",)


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
    for name, setting in ENV_SETTINGS.items():
        raw = environ.get(name)
        if raw is None:
            continue
        try:
            value = setting.parse_env(raw)
        except ValueError:
            expected = "true or false (1/0)" if setting.parse_env is env_boolean else "a number"
            if setting.parse_env is int:
                expected = "an integer"
            raise ConfigError(
                f"environment variable {name}: key '{setting.key}': expected {expected}, "
                f"got {raw!r}"
            ) from None
        problem = setting.check(value)
        if problem:
            raise ConfigError(f"environment variable {name}: key '{setting.key}': {problem}")
        table.setdefault(setting.section, {})[setting.name] = value
    return table
