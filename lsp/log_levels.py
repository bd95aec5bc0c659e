"""pygls logs every message it sends at INFO (megabytes of log for a busy session) and
every undecodable input with a traceback at ERROR: per-message lines belong at DEBUG.
Our own handlers' failures are logged once per message by SessionServer."""

from __future__ import annotations

import logging

PYGLS_LOGGERS = (
    "pygls.protocol.json_rpc",
    "pygls.protocol.language_server",
    "pygls.feature_manager",
    "pygls.server",
    "pygls.workspace",
)


class DemoteToDebug(logging.Filter):
    """Rewrites a record to DEBUG, and drops it unless its logger is enabled for DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.ERROR:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.exc_info, record.exc_text = None, None  # no traceback per bad message
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


_FILTER = DemoteToDebug()


def demote_pygls_logging() -> None:
    """Idempotent: each pygls logger gets the one filter once."""
    for name in PYGLS_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
