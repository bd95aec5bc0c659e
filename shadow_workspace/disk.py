"""The disk side: file URIs to paths inside a root, reading text files strictly as
UTF-8, the disk state a shadow is based on, and atomic conditional writes."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from .model import (
    CommitConflict,
    DiskWriteError,
    DocumentTooLarge,
    PathOutsideRoot,
    UnsupportedFile,
)

log = logging.getLogger(__name__)
BOM = b"\xef\xbb\xbf"
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024  # larger documents are refused, not loaded
TEMP_SUFFIX = ".shadowtab"  # temp files of atomic writes: ".NAME.RANDOM.shadowtab"


@dataclass(frozen=True, slots=True)
class DiskBase:
    """What the disk held when the shadow was based on it (exists False: no file)."""

    sha256: str
    mtime_ns: int = 0
    size: int = 0
    exists: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DiskBase:
        return cls(
            str(data["sha256"]), int(data["mtime_ns"]), int(data["size"]), bool(data["exists"])
        )


MISSING = DiskBase(sha256="", exists=False)


@dataclass(frozen=True, slots=True)
class DiskText:
    text: str
    base: DiskBase
    bom: bool = False


def uri_to_path(uri: str) -> Path:
    """The local path of a `file:` URI: no host (the host would be ignored and the path
    written locally), an absolute path (a relative one would land wherever the daemon
    runs), no `..` segment and no NUL, checked after percent-decoding."""
    if not isinstance(uri, str):
        raise PathOutsideRoot(f"a URI must be a string, got {type(uri).__name__}")
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise PathOutsideRoot(f"only file: URIs are supported, got {uri!r}")
    if parsed.netloc not in ("", "localhost"):
        raise PathOutsideRoot(f"file URIs with a host ({parsed.netloc!r}) are refused: {uri!r}")
    if parsed.params or parsed.query or parsed.fragment:
        raise PathOutsideRoot(f"a file URI has no parameters, query or fragment: {uri!r}")
    text = unquote(parsed.path)
    if "\x00" in text:
        raise PathOutsideRoot(f"a NUL byte in the path of {uri!r}")
    if not text.startswith("/") or text.startswith("//"):
        raise PathOutsideRoot(f"not an absolute file path: {uri!r}")
    if ".." in text.split("/"):
        raise PathOutsideRoot(f"a '..' segment in {uri!r}")
    return Path(text)


def path_to_uri(path: Path) -> str:
    return "file://" + quote(str(path))


def resolve_inside(root: Path, path: Path) -> Path:
    """The real path of `path` (symlinks and .. resolved); refused when outside `root`."""
    real_root = root.resolve()
    real = (root / path).resolve()
    if real != real_root and real_root not in real.parents:
        raise PathOutsideRoot(f"{path} resolves to {real}, outside the workspace root {real_root}")
    return real


def refuse_symlinks_below(root: Path, path: Path) -> None:
    """Refused when any part of `path` from the workspace root down is a symlink (model
    edits and commits never go through one, even one pointing inside the root). The
    folders above the root may be links (/tmp on macOS): the walk stops at the root."""
    real_root = root.resolve()
    for part in (path, *path.parents):
        if part.is_symlink():
            raise PathOutsideRoot(f"{path} goes through the symlink {part}: refused")
        if part == real_root or part.resolve() == real_root:
            return
    raise PathOutsideRoot(f"{path} is outside the workspace root {real_root}")


def decode_text(data: bytes, path: Path) -> tuple[str, bool]:
    """(text, had BOM); binary or non-UTF-8 content is refused."""
    bom = data.startswith(BOM)
    body = data[len(BOM) :] if bom else data
    if b"\x00" in body:
        raise UnsupportedFile(f"{path}: binary file (NUL bytes), refused")
    try:
        return body.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise UnsupportedFile(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def base_of(data: bytes, st: os.stat_result) -> DiskBase:
    return DiskBase(hashlib.sha256(data).hexdigest(), st.st_mtime_ns, st.st_size)


def check_document_size(path: Path, size: int, limit: int) -> None:
    if size > limit:
        raise DocumentTooLarge(
            f"{path}: {size} bytes, over the {limit}-byte document limit (max_document_mb)"
        )


def read_bytes(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> tuple[bytes, DiskBase] | None:
    """The file's bytes and state, or None when there is no file; over `limit` bytes it
    is refused from its size, before a byte is read."""
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UnsupportedFile(f"{path}: not a regular file")
            check_document_size(path, st.st_size, limit)
            data = handle.read(limit + 1)
            check_document_size(path, len(data), limit)  # it grew since the fstat
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError as exc:
        raise UnsupportedFile(f"{path}: a directory, not a file") from exc
    return data, base_of(data, st)


def read_text(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> DiskText:
    """The file as text plus its state; a missing file reads as "" with MISSING base."""
    found = read_bytes(path, limit)
    if found is None:
        return DiskText("", MISSING)
    data, base = found
    text, bom = decode_text(data, path)
    return DiskText(text, base, bom)


def current_base(path: Path) -> DiskBase:
    found = read_bytes(path)
    return MISSING if found is None else found[1]


def same_content(a: DiskBase, b: DiskBase) -> bool:
    return a.exists == b.exists and a.sha256 == b.sha256


def atomic_write(path: Path, data: bytes, expected: DiskBase, mode: int | None = None) -> DiskBase:
    """Write `data` to `path` only if the disk still holds `expected`: temp file in the
    same folder, fsync, mode kept, rename over, folder fsynced. Else CommitConflict; an
    OS failure before the rename (full disk, EIO, read-only) is DiskWriteError, with the
    old file whole and no temp file left."""
    current = current_base(path)
    if not same_content(current, expected):
        raise CommitConflict(str(path), "the file changed on disk since the shadow was based on it")
    try:
        _write_and_rename(path, data, _mode_for(path) if mode is None else mode)
    except OSError as exc:
        raise DiskWriteError(str(path), exc) from exc
    try:
        fsync_dir(path.parent)
    except OSError as exc:  # renamed already: the new version is what the disk holds
        log.warning("%s: folder not synced after the write (%s)", path, exc)
    st = os.stat(path)
    return DiskBase(hashlib.sha256(data).hexdigest(), st.st_mtime_ns, st.st_size)


def _write_and_rename(path: Path, data: bytes, mode: int) -> None:
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb", buffering=0) as handle:
            _write_all(handle.fileno(), data)
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise


def _write_all(fd: int, data: bytes) -> None:
    """os.write until all of `data` is written (short writes happen near a full disk)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
