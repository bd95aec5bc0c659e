"""Helpers of the shadow workspace tests (a unique module name: conftest is ambiguous)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from shadowtab.shadow_workspace import path_to_uri


def uri_of(path: Path) -> str:
    return path_to_uri(path.absolute())


def disk_snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under `folder`: (content hash, mtime_ns, mode)."""
    found = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath, name)
            st = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(folder))] = (digest, st.st_mtime_ns, st.st_mode)
    return found
