"""The keys of `shadowtab.toml`: one table of settings, and their validation.

SETTINGS joins the rows defined beside what they configure: the engine's
(inference/engines/settings.py, EngineOptions), the predictor's
(inference/next_edit/settings.py, NextEditOptions) and the language server's
(lsp/settings.py, DebounceOptions and LimitsOptions). A setting has one name: its key
`section.name` is the field `name` of the section's options object, and
SHADOWTAB_<SECTION>_<NAME> its environment variable. The config loader (config.py),
validation, the environment variables, `daemon status` and the configuration reference
(`shadowtab config --reference`) all derive from it; tests/daemon/test_settings_table.py
checks that they agree.

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
)
from shadowtab.inference.next_edit.settings import NEXT_EDIT_SETTINGS
from shadowtab.lsp.settings import LSP_SETTINGS

__all__ = [
    "ENGINE_KINDS",
    "ENGINE_PROCESSES",
    "ENV_SETTINGS",
    "OLD_ENV_SETTINGS",
    "SECTIONS",
    "SETTINGS",
    "ConfigError",
    "EngineKind",
    "EngineProcess",
    "current_env",
    "env_boolean",
    "env_deprecations",
    "table_from_env",
    "validate_table",
]


class ConfigError(ValueError):
    """A setting is unknown, of the wrong type or out of range; the message names the
    key and its source (a file path or an environment variable)."""


# The one table, in the order the configuration reference shows it. Each part is defined
# beside what it configures, so an options object takes its defaults from its own rows.
SETTINGS: tuple[Setting, ...] = (
    *ENGINE_SETTINGS,
    *(s for s in NEXT_EDIT_SETTINGS if s.section == "engine"),  # engine.adapter_format
    *LSP_SETTINGS,
    *(s for s in NEXT_EDIT_SETTINGS if s.section != "engine"),
)
BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}

# section -> key -> check. `linters` is a table of linter names, each a LINTER_KEYS table.
SECTIONS: dict[str, dict[str, Check]] = {}
for _setting in SETTINGS:
    SECTIONS.setdefault(_setting.section, {})[_setting.name] = _setting.check
# SHADOWTAB_* variable -> the setting it overrides; OLD_ENV_SETTINGS: the variables it
# was once read from (still read, with a deprecation line, unless the new one is set),
# oldest first, so that the newer of two old names set wins
ENV_SETTINGS: dict[str, Setting] = {s.env: s for s in SETTINGS if s.env}
OLD_ENV_SETTINGS: dict[str, Setting] = {old: s for s in SETTINGS for old in s.old_env}


def current_env(setting: Setting) -> str | None:
    """The variable to use instead of one of `setting`'s old ones: its own, or for a
    deprecated key (which has none) its replacement's."""
    if setting.env is None and setting.replaced_by is not None:
        return BY_KEY[setting.replaced_by].env
    return setting.env


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
    """The overrides set in the environment, as a table shaped like the TOML file. A
    setting's old variable is read too, unless its own variable is set."""
    table: dict[str, dict[str, Any]] = {}
    # old names first, so that a setting's own variable wins
    for name, setting in (*OLD_ENV_SETTINGS.items(), *ENV_SETTINGS.items()):
        raw = environ.get(name)
        if raw is not None:
            table.setdefault(setting.section, {})[setting.name] = _env_value(name, setting, raw)
    return table


def env_deprecations(environ: Mapping[str, str]) -> tuple[str, ...]:
    """A line for each old variable name set in the environment, with its new name."""
    found = []
    for old, setting in OLD_ENV_SETTINGS.items():
        if old not in environ:
            continue
        new = current_env(setting)
        # what is read: the new variable, else the newest old one set
        read = next(name for name in (new, *reversed(setting.old_env)) if name in environ)
        if read != old:
            found.append(f"{old} is deprecated and ignored: {read} is set")
        else:
            found.append(f"{old} is deprecated: it is read as {new}; rename it")
    return tuple(found)


def _env_value(name: str, setting: Setting, raw: str) -> Any:
    try:
        value = setting.parse_env(raw)
    except ValueError:
        expected = "true or false (1/0)" if setting.parse_env is env_boolean else "a number"
        if setting.parse_env is int:
            expected = "an integer"
        raise ConfigError(
            f"environment variable {name}: key '{setting.key}': expected {expected}, got {raw!r}"
        ) from None
    problem = setting.check(value)
    if problem:
        raise ConfigError(f"environment variable {name}: key '{setting.key}': {problem}")
    return value
