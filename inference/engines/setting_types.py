"""What a setting is (key, type, default, environment variable, description, check) and
the checks settings use. The rows are defined beside what they configure:
engines/settings.py (`[engine]`), next_edit/settings.py (`[next_edit]`) and
lsp/settings.py (`[debounce]`, `[limits]`); the daemon's config_schema.py joins them
into the one table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Check = Callable[[Any], str | None]  # a problem description, or None when valid


ENV_PREFIX = "SHADOWTAB_"


@dataclass(frozen=True)
class Setting:
    """One setting, defined once. `key` is "section.name" in shadowtab.toml, and its name
    everywhere else: `name` is the field of the section's options object (EngineOptions
    for `[engine]`, NextEditOptions, DebounceOptions, LimitsOptions) and, with `in_env`,
    the key upper-cased with `_` for `.`, after SHADOWTAB_, is the environment variable
    that overrides it (`engine.context_size`: SHADOWTAB_ENGINE_CONTEXT_SIZE), read by
    `parse_env`. `old_env` are variables the setting was once read from: still read, with
    a deprecation line. A deprecated key (`replaced_by`) has no variable of its own, only
    its old ones."""

    key: str
    default: Any
    type: str  # as the configuration reference shows it
    description: str
    check: Check
    in_env: bool = False
    parse_env: Callable[[str], Any] = str
    secret: bool = False  # its value is never shown (status says "set")
    replaced_by: str | None = None  # a deprecated key, read as this one
    old_env: tuple[str, ...] = ()  # deprecated variables, read as `env`

    @property
    def section(self) -> str:
        return self.key.partition(".")[0]

    @property
    def name(self) -> str:
        return self.key.partition(".")[2]

    @property
    def env(self) -> str | None:
        """The SHADOWTAB_* variable that overrides this setting, if any."""
        return env_name(self.key) if self.in_env else None


def env_name(key: str) -> str:
    """A key's environment variable: `section.name` -> SHADOWTAB_SECTION_NAME (the section
    is kept, so `engine.model` and `engine.model_path` read as what they configure)."""
    return ENV_PREFIX + key.upper().replace(".", "_")


def table_defaults(settings: Sequence[Setting], section: str) -> dict[str, Any]:
    """name -> default of one section's rows: what its options object defaults to
    (deprecated keys left out: they are no field)."""
    return {s.name: s.default for s in settings if s.section == section and s.replaced_by is None}


def describe_value(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def integer(minimum: int) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer, got {describe_value(value)}"
        if value < minimum:
            return f"expected an integer >= {minimum}, got {value}"
        return None

    return check


def one_of(choices: Callable[[], Sequence[str]]) -> Check:
    """One of `choices()` (a registry's names, asked when a value is checked)."""

    def check(value: Any) -> str | None:
        known = tuple(choices())
        if value not in known:
            return f"expected one of {', '.join(map(repr, known))}, got {describe_value(value)}"
        return None

    return check


def string(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"expected a string, got {describe_value(value)}"
    return None if value else "expected a non-empty string"


def secret(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "expected a non-empty string"  # the value itself is never repeated
    return None


def string_list(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return f"expected a list of strings, got {describe_value(value)}"
    return None


def boolean(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    return f"expected true or false, got {describe_value(value)}"


def positive_number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return f"expected a number > 0, got {describe_value(value)}"
    return None


def probability(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return f"expected a number from 0 to 1, got {describe_value(value)}"
    return None


def device(value: Any) -> str | None:
    if value not in ("cuda", "cpu") and not (isinstance(value, str) and value.startswith("cuda:")):
        return f"expected 'cuda', 'cuda:N' or 'cpu', got {describe_value(value)}"
    return None


def http_url(value: Any) -> str | None:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        return f"expected an http(s) URL such as 'http://host:8000/v1', got {describe_value(value)}"
    return None


def env_boolean(text: str) -> bool:
    """An environment variable's true/false: 1/true/yes/on or 0/false/no/off."""
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false (1/0), got {text!r}")
