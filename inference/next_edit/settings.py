"""The predictor's settings table: the `[next_edit]` keys of shadowtab.toml, and
`engine.adapter_format`, defined once with their type, default, environment variable and
description; and NextEditOptions, the `[next_edit]` section as the predictor takes it.

`engine.adapter_format` is an `[engine]` key (the engine reports it), but its value is
one of the prompt formats, which only next_edit knows; so its row is here and the engine
imports nothing of next_edit. The daemon's configuration (daemon/config_schema.py) joins
these rows with the engine's and the language server's."""

from __future__ import annotations

from dataclasses import dataclass

from ..engines import setting_types as checks
from ..engines.setting_types import Setting, table_defaults
from .formats import AUTO, FORMATS
from .token_confidence import DEFAULT_TOKEN_THRESHOLD

# The project's code in the prompt: off until it measures better with the project present
# (benchmarks/ghost_losses.py --project on --context-tokens N; docs/MEASUREMENTS.md,
# 2026-12-06: 512 tokens raise what the model knows, not what the gate shows, and cost the
# next edit's tail).
DEFAULT_CONTEXT_TOKENS = 0


def prompt_formats() -> tuple[str, ...]:
    """The prompt formats an adapter can be trained on: the formats registry."""
    return tuple(FORMATS)


def configured_formats() -> tuple[str, ...]:
    """`[next_edit] format`: "auto" (the adapter's format when an adapter is loaded, else
    generic) or one of the prompt formats."""
    return (AUTO, *prompt_formats())


NEXT_EDIT_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "engine.adapter_format",
        None,
        "a prompt format name",
        "openai: the prompt format of the adapter the server applies (one of next_edit's "
        "formats: shadowtab, generic, sweep, zeta).",
        checks.one_of(prompt_formats),
        in_env=True,
        old_env=("SHADOWTAB_ADAPTER_FORMAT",),
    ),
    Setting(
        "next_edit.format",
        AUTO,
        "auto or a prompt format name",
        "The next-edit prompt format: auto (the adapter's when an adapter is loaded, else "
        "generic), shadowtab, generic, sweep or zeta.",
        checks.one_of(configured_formats),
    ),
    Setting(
        "next_edit.min_confidence",
        0.0,
        "number from 0 to 1",
        "Suggestions the predictor is less sure of than this are not shown.",
        checks.probability,
    ),
    Setting(
        "next_edit.token_threshold",
        DEFAULT_TOKEN_THRESHOLD,
        "number from 0 to 1",
        "Ghost text is cut at the first token the model is less sure of than this, and a "
        "next edit that writes such a token is not shown (0: no cut). Short suggestions "
        "are right far more often than long ones.",
        checks.probability,
    ),
    Setting(
        "next_edit.gate",
        True,
        "boolean",
        "Ghost text's learned gate chooses where to cut a suggestion, or to show none, "
        "with the model it was fitted for (the packaged one); other models, or false, "
        "use next_edit.token_threshold alone.",
        checks.boolean,
        in_env=True,
        old_env=("SHADOWTAB_GHOST_GATE", "SHADOWTAB_GATE"),
        parse_env=checks.env_boolean,
    ),
    Setting(
        "next_edit.context_tokens",
        DEFAULT_CONTEXT_TOKENS,
        "integer, 0 or more",
        "About how many tokens of the project's code (the windows of the workspace most "
        "like the lines around the cursor, this file's far parts included) go before the "
        "file in the prompt; 0: none. With a remote engine this sends that code to the "
        "server.",
        checks.integer(0),
        in_env=True,
        parse_env=int,
    ),
    Setting(
        "next_edit.check_names",
        True,
        "boolean",
        "Python suggestions are cut before the first name they write that jedi cannot "
        "resolve (a misspelled local, a member the object does not have); a next edit "
        "writing one is not shown. Where jedi knows nothing of an object, its names pass.",
        checks.boolean,
    ),
    Setting(
        "next_edit.check_names_ms",
        150,
        "integer >= 1",
        "The name check's time limit per suggestion, in ms; past it the suggestion is "
        "shown unchecked (`daemon status` counts these).",
        checks.integer(1),
    ),
)

_D = table_defaults(NEXT_EDIT_SETTINGS, "next_edit")


@dataclass(frozen=True)
class NextEditOptions:
    """The `[next_edit]` section: each field is the key of the same name, its default
    the table's."""

    format: str = _D["format"]
    min_confidence: float = _D["min_confidence"]
    token_threshold: float = _D["token_threshold"]
    gate: bool = _D["gate"]
    check_names: bool = _D["check_names"]
    check_names_ms: int = _D["check_names_ms"]
    context_tokens: int = _D["context_tokens"]
