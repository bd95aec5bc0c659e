"""Reading one file for the index: a regular file (never through a symbolic link), within
the size bound, not binary (a NUL byte in its first 8 KiB, git's own test), UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

from . import extract
from .walk import IgnoreRules, file_skip_reason

BINARY_PROBE_BYTES = 8192


class Gone(Exception):
    """The file is not there (any more), or is not a regular file."""


def read_indexable(
    key: str, max_bytes: int, rules: IgnoreRules
) -> tuple[str, os.stat_result] | str:
    """The text and stat of the file at `key`, or why it is skipped; raises Gone."""
    try:
        stat = os.stat(key, follow_symlinks=False)
        if not os.path.isfile(key) or os.path.islink(key):
            raise Gone(key)
        reason = file_skip_reason(Path(key), stat.st_size, max_bytes, rules)
        if reason is not None:
            return reason
        with open(key, "rb") as file:
            data = file.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise Gone(key) from exc
    except OSError:
        return "unreadable"
    if b"\0" in data[:BINARY_PROBE_BYTES]:
        return "binary"
    try:
        return data.decode("utf-8-sig"), stat
    except UnicodeDecodeError:
        return "not_utf8"


def read_lines(path: str) -> list[str]:
    """A file's lines as the index counts them, for a window's text; [] if unreadable."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as file:
            return extract.split_lines(file.read())
    except OSError:
        return []
