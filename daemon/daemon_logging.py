"""The daemon's log: a rotating file in the state dir (`daemon status` prints its path)."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"
MAX_LOG_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3


def setup_logging(log_file: Path, also_stderr: bool) -> None:
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handlers: list[logging.Handler] = [
        logging.handlers.RotatingFileHandler(
            log_file, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    ]
    if also_stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    formatter = logging.Formatter(LOG_FORMAT)
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)
