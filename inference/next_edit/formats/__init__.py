"""Prompt formats for next-edit prediction, by name: `shadowtab` (our adapter's),
`generic` (a plain instruct or base model), `sweep`, `zeta`. Chosen per model by
config (`[next_edit] format`); by default the adapter's format when an adapter is
loaded, else `generic`."""

from __future__ import annotations

from .base import FinishReason, Format
from .generic import GenericFormat
from .registered import ShadowtabFormat
from .sweep import SweepFormat
from .zeta import ZetaFormat

FORMATS: dict[str, Format] = {
    "shadowtab": ShadowtabFormat(),
    "generic": GenericFormat(),
    "sweep": SweepFormat(),
    "zeta": ZetaFormat(),
}
AUTO = "auto"
ADAPTER_FORMAT = "shadowtab"  # what the project's own adapter is trained on

__all__ = [
    "ADAPTER_FORMAT",
    "AUTO",
    "FORMATS",
    "FinishReason",
    "Format",
    "choose_format",
    "get_format",
    "stop_strings",
]


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"unknown next-edit format {name!r} (known: {known})") from None


def choose_format(configured: str | None, adapter_format: str | None) -> Format:
    """The configured format; with none (or `auto`), the adapter's format when an
    adapter is loaded (`adapter_format` not None), else `generic`."""
    if configured and configured != AUTO:
        return get_format(configured)
    return get_format(adapter_format or "generic")


def stop_strings(fmt: Format, rendered: object) -> tuple[str, ...]:
    """The stop strings for one rendered prompt (a format may pick them per prompt)."""
    stop_for = getattr(fmt, "stop_for", None)
    return tuple(stop_for(rendered)) if stop_for is not None else fmt.stop
