"""Settings of the daemon: defaults, then the user's `shadowtab.toml` (config dir), then
the workspace's `shadowtab.toml`, then SHADOWTAB_* environment variables. Validated
before the daemon starts: a bad setting stops it with a message naming key and source.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shadowtab.daemon import paths
from shadowtab.daemon.config_schema import (
    BY_KEY,
    ENV_SETTINGS,
    OLD_ENV_SETTINGS,
    SETTINGS,
    ConfigError,
    env_deprecations,
    table_from_env,
    validate_table,
)
from shadowtab.inference.engines.options import EngineOptions
from shadowtab.inference.next_edit.settings import NextEditOptions, prompt_formats
from shadowtab.lsp.settings import DebounceOptions, LimitsOptions

if TYPE_CHECKING:
    from shadowtab.lsp.hub import HubOptions
    from shadowtab.shadow_workspace import LinterSpec

__all__ = ["CONFIG_FILE_NAME", "ConfigError", "Settings", "load_settings"]

CONFIG_FILE_NAME = "shadowtab.toml"
logger = logging.getLogger(__name__)

# SHADOWTAB_* variables that are not settings; any other SHADOWTAB_* name is a typo.
NON_SETTING_ENV_VARS = frozenset(paths.DIR_ENV_VARS)


# The sections of shadowtab.toml, each the options object its rows configure; a key
# `section.name` is the field `name` of Settings' field `section`.
SECTION_OPTIONS: dict[str, type[Any]] = {
    "engine": EngineOptions,
    "debounce": DebounceOptions,
    "limits": LimitsOptions,
    "next_edit": NextEditOptions,
}


@dataclass(frozen=True)
class Settings:
    """The configuration in effect: one field per section of shadowtab.toml, named as
    the section, whose fields are its keys (`settings.engine.context_size` is
    `engine.context_size`); each key is a row of config_schema.SETTINGS, where its
    default, variable and meaning are defined."""

    engine: EngineOptions = field(default_factory=EngineOptions)
    debounce: DebounceOptions = field(default_factory=DebounceOptions)
    limits: LimitsOptions = field(default_factory=LimitsOptions)
    next_edit: NextEditOptions = field(default_factory=NextEditOptions)
    # name -> [linters.NAME] table, over shadow_workspace's DEFAULT_LINTERS (ruff, syntax)
    linters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()  # files and env vars that set something, in order
    deprecations: tuple[str, ...] = ()  # old keys still honoured, each with its new name

    def engine_options(self, data_dir: Path | None = None) -> EngineOptions:
        """The engine as the daemon builds it: with its data dir, and the prompt formats
        the predictor can render (an adapter trained on another is refused)."""
        return dataclasses.replace(
            self.engine, data_dir=data_dir or paths.data_dir(), adapter_formats=prompt_formats()
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
            debounce=self.debounce,
            limits=self.limits,
            next_edit=self.next_edit,
        )

    def describe(self) -> dict[str, Any]:
        """A plain-data view for `daemon status --json` and the log: section -> key ->
        value, as in shadowtab.toml (a secret shows as "set")."""
        shown: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.replaced_by is not None:
                continue  # a deprecated key: read as its new one, no value of its own
            value = getattr(getattr(self, setting.section), setting.name)
            if setting.secret:
                value = "set" if value else None  # the value itself never
            shown.setdefault(setting.section, {})[setting.name] = value
        return {
            **shown,
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
    sources.extend(name for name in (*OLD_ENV_SETTINGS, *ENV_SETTINGS) if name in environ)
    settings = _settings_from_table(merged, tuple(sources), env_deprecations(environ))
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
    known = {*ENV_SETTINGS, *OLD_ENV_SETTINGS, *NON_SETTING_ENV_VARS}
    for name in environ:
        if name.startswith("SHADOWTAB_") and name not in known:
            listed = ", ".join(sorted(known))
            raise ConfigError(f"environment variable {name}: unknown setting (known: {listed})")


def _merge(into: dict[str, Any], table: Mapping[str, Any]) -> None:
    """Later sources win key by key; a linter's table is replaced as a whole."""
    for section, body in table.items():
        into.setdefault(section, {}).update(body)  # for linters: name -> whole table


def _settings_from_table(
    table: Mapping[str, Any], sources: tuple[str, ...], env_deprecated: tuple[str, ...] = ()
) -> Settings:
    values: dict[str, dict[str, Any]] = {section: {} for section in SECTION_OPTIONS}
    for setting in SETTINGS:
        section = table.get(setting.section, {})
        if setting.name not in section:
            continue
        value = section[setting.name]
        if setting.replaced_by is not None:  # a deprecated key: read as its new one
            new = BY_KEY[setting.replaced_by]
            if new.name in table.get(new.section, {}):
                continue
            setting = new
        if isinstance(setting.default, float) and isinstance(value, int):
            value = float(value)  # TOML's `1` for a number of seconds or MB
        values[setting.section][setting.name] = value
    return Settings(
        **{section: options(**values[section]) for section, options in SECTION_OPTIONS.items()},
        linters=dict(table.get("linters", {})),
        sources=sources,
        deprecations=(*_deprecations(table), *env_deprecated),
    )


def _deprecations(table: Mapping[str, Any]) -> tuple[str, ...]:
    found = []
    for old in SETTINGS:
        if old.replaced_by is None or old.name not in table.get(old.section, {}):
            continue
        new = BY_KEY[old.replaced_by]
        if new.name in table.get(new.section, {}):
            found.append(f"{old.key} is deprecated and ignored: {new.key} is set")
        else:
            found.append(f"{old.key} is deprecated: it is read as {new.key}; rename it")
    return tuple(found)
