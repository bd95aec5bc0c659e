"""The language server's settings table: the `[debounce]` and `[limits]` keys of
shadowtab.toml defined once, with their type, default, environment variable and
description; and the two sections as HubOptions holds them (DebounceOptions,
LimitsOptions: each field is the key of the same name, its default the table's). The
daemon's configuration (daemon/config_schema.py) joins these rows with the engine's and
the predictor's."""

from __future__ import annotations

from dataclasses import dataclass

from shadowtab.inference.engines import setting_types as checks
from shadowtab.inference.engines.setting_types import Setting, table_defaults
from shadowtab.shadow_workspace.disk import MAX_DOCUMENT_BYTES
from shadowtab.shadow_workspace.linting import DEFAULT_LINT_MAX_MB

LSP_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "debounce.lint_ms",
        150,
        "integer >= 0",
        "Pause in typing, in ms, before the document is linted again.",
        checks.integer(0),
        in_env=True,
        old_env=("SHADOWTAB_LINT_DEBOUNCE_MS", "SHADOWTAB_LINT_MS"),
        parse_env=int,
    ),
    Setting(
        "debounce.warm_ms",
        100,
        "integer >= 0",
        "Pause in typing, in ms, before the model's cache is warmed with the next prompt.",
        checks.integer(0),
        in_env=True,
        old_env=("SHADOWTAB_WARM_DEBOUNCE_MS", "SHADOWTAB_WARM_MS"),
        parse_env=int,
    ),
    Setting(
        "limits.document_mb",
        MAX_DOCUMENT_BYTES / 2**20,
        "number > 0",
        "Larger documents are refused with a message: no suggestions, no lock.",
        checks.positive_number,
        in_env=True,
        old_env=("SHADOWTAB_MAX_DOCUMENT_MB", "SHADOWTAB_DOCUMENT_MB"),
        parse_env=float,
    ),
    Setting(
        "limits.lint_mb",
        DEFAULT_LINT_MAX_MB,
        "number > 0",
        "Larger documents (in M characters) are not linted: their lint would cost seconds "
        "of CPU per pause in typing. `daemon status` lists the documents skipped.",
        checks.positive_number,
        in_env=True,
        old_env=("SHADOWTAB_LINT_MAX_MB", "SHADOWTAB_LINT_MB"),
        parse_env=float,
    ),
    Setting(
        "limits.prediction_wait_s",
        10.0,
        "number > 0",
        "A prediction still waiting for the model after this many seconds is dropped "
        "(answered ContentModified).",
        checks.positive_number,
        in_env=True,
        old_env=("SHADOWTAB_PREDICTION_WAIT_S",),
        parse_env=float,
    ),
)

_DEBOUNCE = table_defaults(LSP_SETTINGS, "debounce")
_LIMITS = table_defaults(LSP_SETTINGS, "limits")


@dataclass(frozen=True)
class DebounceOptions:
    """The `[debounce]` section: pauses in typing, in ms."""

    lint_ms: int = _DEBOUNCE["lint_ms"]
    warm_ms: int = _DEBOUNCE["warm_ms"]


@dataclass(frozen=True)
class LimitsOptions:
    """The `[limits]` section: sizes and waits past which the server refuses or drops."""

    document_mb: float = _LIMITS["document_mb"]
    lint_mb: float = _LIMITS["lint_mb"]
    prediction_wait_s: float = _LIMITS["prediction_wait_s"]
