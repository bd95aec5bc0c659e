"""The configuration reference in Markdown, generated from the settings table (printed by
`shadowtab config --reference`; the README's configuration section is this output)."""

from __future__ import annotations

from typing import Any

from shadowtab.daemon.config_schema import LINTER_KEYS, SETTINGS, current_env

INTRO = (
    "Settings come from defaults, then the user's `shadowtab.toml` (in the config dir), "
    "then the workspace's `shadowtab.toml`, then `SHADOWTAB_*` environment variables; a "
    "later source wins key by key. An unknown key or a bad value stops the daemon with a "
    "message naming the key and its source. A key's environment variable is "
    "`SHADOWTAB_<SECTION>_<NAME>`, the whole key upper-cased with `_` for `.` "
    "(`engine.context_size`: `SHADOWTAB_ENGINE_CONTEXT_SIZE`)."
)
OLD_ENV = "Older variable names still read, with a deprecation line (the new one wins): "
LINTERS = (
    "`[linters.NAME]` adds a linter, or replaces or (`enabled = false`) drops a default "
    "one (`ruff`, `python-syntax`). Its keys: "
)


def reference_markdown() -> str:
    renamed = "; ".join(
        f"{', '.join(f'`{old}`' for old in s.old_env)} (now `{current_env(s)}`)"
        for s in SETTINGS
        if s.old_env
    )
    lines = ["## Configuration", "", INTRO, "", OLD_ENV + renamed + "."]
    sections: dict[str, list[str]] = {}
    for setting in SETTINGS:
        row = (
            f"| `{setting.name}` | {setting.type} | {_default(setting.default)} | "
            f"{_code(setting.env)} | {setting.description} |"
        )
        sections.setdefault(setting.section, []).append(row)
    for section, rows in sections.items():
        lines += ["", f"### `[{section}]`", "", "| Key | Type | Default | Environment | Meaning |"]
        lines += ["|---|---|---|---|---|", *rows]
    keys = ", ".join(f"`{key}`" for key in LINTER_KEYS)
    lines += ["", "### `[linters.NAME]`", "", LINTERS + keys + "."]
    return "\n".join(lines) + "\n"


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _code(text: str | None) -> str:
    return f"`{text}`" if text else "-"
