"""The daemon's log: one file in the state dir (`daemon status` prints its path), kept
under a size limit with a few backups beside it.

A detached daemon's stdout and stderr are that same file: a traceback Python prints, a C
library's message, faulthandler's dump of a crash, and the engine worker (which inherits
fd 2) all land in it. So the limit cannot be kept by renaming the file as
RotatingFileHandler does: every fd pointing at it would follow the renamed inode, past
the limit and, once the backup is dropped, into a deleted file that still fills the
disk. It is rotated by copy and truncate instead (as logrotate's copytruncate): the
last MAX_LOG_BYTES are copied to `.1` (the older backups shifted), then the file is
truncated in place; every writer opened it O_APPEND, so each goes on at the new end.
Bytes written between the copy and the truncation are lost, a window of a few
microseconds once per MAX_LOG_BYTES.

The size is checked after every log record and every LOG_CHECK_S by a thread, for
output that bypasses logging (a burst between two checks can pass the limit: its
start is dropped when it is rotated, so no file exceeds the limit for long)."""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import threading
from pathlib import Path

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"
MAX_LOG_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3
LOG_CHECK_S = 2.0
STD_FDS = (1, 2)


class BoundedLog(logging.FileHandler):
    """A log file rotated by copy and truncate at `max_bytes`, `backups` kept; with
    `own_std_fds`, fds 1 and 2 point at it (again after it was deleted or replaced)."""

    def __init__(self, path: Path, max_bytes: int, backups: int, own_std_fds: bool) -> None:
        super().__init__(path, mode="a", encoding="utf-8")  # "a": O_APPEND
        self.max_bytes = max_bytes
        self.backups = backups
        self.own_std_fds = own_std_fds
        self.rotations = 0
        self._stop = threading.Event()
        if own_std_fds:
            self._point_std_fds()

    def start_checking(self, every_s: float) -> None:
        """Check the size every `every_s` in a thread (stderr grows without records)."""
        thread = threading.Thread(
            target=self._check_loop, args=(every_s,), name="shadowtab-log-size", daemon=True
        )
        thread.start()

    def _check_loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.check()

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        self.check()

    def close(self) -> None:
        self._stop.set()
        super().close()

    def check(self) -> None:
        """Reopen the file if it was deleted or replaced; rotate it if over the limit.
        An OS error (a full disk) is left to the next check: logging must not fail."""
        self.acquire()
        try:
            if self.stream is None:  # closed
                return
            if not self._still_at_path(self.stream.fileno()):
                self.stream.close()
                self.stream = self._open()
                if self.own_std_fds:
                    self._point_std_fds()
            if os.fstat(self.stream.fileno()).st_size >= self.max_bytes:
                self.stream.flush()
                self._rotate(self.stream.fileno())
        except OSError:
            pass
        finally:
            self.release()

    def _still_at_path(self, fd: int) -> bool:
        try:
            at_path = os.stat(self.baseFilename)
        except FileNotFoundError:
            return False
        ours = os.fstat(fd)
        return (at_path.st_dev, at_path.st_ino) == (ours.st_dev, ours.st_ino)

    def _point_std_fds(self) -> None:
        assert self.stream is not None
        sys.stdout.flush()
        sys.stderr.flush()
        for fd in STD_FDS:
            os.dup2(self.stream.fileno(), fd)

    def _rotate(self, fd: int) -> None:
        if self.backups > 0:
            self._shift_backups()
            self._copy_tail(Path(f"{self.baseFilename}.1"))
        os.ftruncate(fd, 0)
        self.rotations += 1

    def _shift_backups(self) -> None:
        for number in range(self.backups - 1, 0, -1):
            older = Path(f"{self.baseFilename}.{number}")
            if older.exists():
                os.replace(older, f"{self.baseFilename}.{number + 1}")

    def _copy_tail(self, backup: Path) -> None:
        """The last max_bytes of the file, from a line's start, into `backup` (read
        through a path of its own: the log's fd is open for appending only)."""
        with open(self.baseFilename, "rb") as log:
            start = max(0, os.fstat(log.fileno()).st_size - self.max_bytes)
            log.seek(start)
            data = log.read()
        if start > 0:  # a burst between two checks: its start is dropped
            kept = data[data.find(b"\n") + 1 :]
            dropped = start + len(data) - len(kept)
            data = f"[{dropped} bytes of log dropped: written faster than rotated]\n".encode()
            data += kept
        backup.write_bytes(data)


def setup_logging(log_file: Path, foreground: bool) -> BoundedLog:
    """The daemon's log. In the foreground it is also copied to stderr; detached, fds 1
    and 2 point at the log file, and a crash's traceback is dumped there
    (faulthandler)."""
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    bounded = BoundedLog(log_file, MAX_LOG_BYTES, LOG_BACKUPS, own_std_fds=not foreground)
    bounded.start_checking(LOG_CHECK_S)
    handlers: list[logging.Handler] = [bounded]
    if foreground:
        handlers.append(logging.StreamHandler(sys.stderr))
    else:
        faulthandler.enable(file=sys.stderr)
    formatter = logging.Formatter(LOG_FORMAT)
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    return bounded
