"""What a setting is (key, type, default, environment variable, description, check) and
the checks settings use. The tables are engines/settings.py (the engine's) and the
daemon's config_schema.py (the engine's plus the daemon's and the language server's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Check = Callable[[Any], str | None]  # a problem description, or None when valid


@dataclass(frozen=True)
class Setting:
    """One setting, defined once. `key` is "section.name" in shadowtab.toml; `field` the
    daemon Settings' attribute; `option` the EngineOptions field it sets (engine
    settings); `env` the SHADOWTAB_* variable that overrides it, read by `parse_env`."""

    key: str
    default: Any
    type: str  # as the configuration reference shows it
    description: str
    check: Check
    field: str
    env: str | None = None
    parse_env: Callable[[str], Any] = str
    option: str | None = None
    secret: bool = False  # its value is never shown (status says "set")
    replaced_by: str | None = None  # a deprecated key, read as this one

    @property
    def section(self) -> str:
        return self.key.partition(".")[0]

    @property
    def name(self) -> str:
        return self.key.partition(".")[2]


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
