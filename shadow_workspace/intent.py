"""The intent file of a commit in progress: every file the commit writes (its new bytes)
or removes, and the version each must replace, saved whole (temp file, fsync, rename)
beside the journal before the first write. A process killed midway leaves it; the next
start finishes the commit from it (finish_interrupted), step by step and idempotently:
a file that already holds its new state is left alone, one that holds neither its old
state nor its new one (changed meanwhile by someone else) is left alone and logged."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from .disk import (
    atomic_write,
    current_base,
    fsync_dir,
    refuse_symlinks_below,
    resolve_inside,
)
from .model import ShadowError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IntentStep:
    """`data` None: remove the file. `expected`: the sha256 of the version it replaces
    ("" for no file)."""

    path: str
    data: bytes | None
    expected: str
    mode: int | None = None


def intent_path(journal: Path) -> Path:
    return journal.with_suffix(".commit")


def write_intent(path: Path, steps: list[IntentStep]) -> None:
    record = [[s.path, s.data, s.expected, s.mode] for s in steps]
    temp = path.with_suffix(".commit-temp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(msgpack.packb({"steps": record}, use_bin_type=True))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)  # on a full disk, a half-written plan frees its space
        raise
    fsync_dir(path.parent)


def clear_intent(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)


def read_intent(path: Path) -> list[IntentStep] | None:
    """The steps of an interrupted commit, or None (no intent, or one never finished
    writing: the commit had not started then)."""
    with contextlib.suppress(FileNotFoundError):
        path.with_suffix(".commit-temp").unlink()
    try:
        record: Any = msgpack.unpackb(path.read_bytes(), raw=False)
        return [IntentStep(str(p), d, str(e), m) for p, d, e, m in record["steps"]]
    except FileNotFoundError:
        return None
    except (ValueError, TypeError, KeyError, msgpack.UnpackException) as exc:
        log.error("commit intent %s unreadable (%s): ignored", path, exc)
        return None


def finish_interrupted(journal: Path, root: Path) -> int:
    """Finish the commit a killed process left (if any); returns the steps it redid."""
    path = intent_path(journal)
    steps = read_intent(path)
    redone = 0
    for step in steps or []:
        try:
            redone += _redo(root, step)
        except (ShadowError, OSError) as exc:
            log.error("interrupted commit: %s not finished: %s", step.path, exc)
    if steps is not None:
        log.warning("finished an interrupted commit: %d of %d files redone", redone, len(steps))
        clear_intent(path)
    return redone


def _redo(root: Path, step: IntentStep) -> int:
    real = resolve_inside(root, Path(step.path))
    refuse_symlinks_below(root, real)
    current = current_base(real)
    new_sha = None if step.data is None else hashlib.sha256(step.data).hexdigest()
    if (current.sha256 if current.exists else None) == new_sha:
        return 0  # done before the kill
    if (current.sha256 if current.exists else "") != step.expected:
        log.error("interrupted commit: %s changed meanwhile: left as it is", real)
        return 0
    if step.data is None:
        real.unlink()
        fsync_dir(real.parent)
        return 1
    real.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(real, step.data, current, step.mode)
    return 1
