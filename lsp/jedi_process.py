"""The daemon's end of the name check's jedi process (jedi_names.py): started at first
use, asked one request at a time, its answer waited for at most a budget. Past the
budget the process is killed, its memory with it, and the next request starts a new
one; one that grew past a size is replaced the same way between requests."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import socket
import subprocess
import sys
from typing import Any

logger = logging.getLogger(__name__)

CHILD_MODULE = "shadowtab.lsp.jedi_names"
# Starting: the interpreter, jedi's import, builtins' stubs (about a second on an idle
# EPYC, several on a busy one).
START_BUDGET_S = 30.0
EXIT_WAIT_S = 5.0  # after its socket closed, how long it gets to exit before a SIGKILL


class Stopped(Exception):
    """The process ran past the request's budget and was killed."""


class JediProcessFailed(Exception):
    """The process could not be started, or died during a request."""


class JediProcess:
    """One jedi process at a time. Not thread-safe: the name check's one thread asks
    (close() may come from any thread)."""

    def __init__(self, modules_kept: int | None = None) -> None:
        # parso's bound in the process (parsed_modules.py); None: its default
        self.modules_kept = modules_kept
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._stream: io.BufferedIOBase | None = None
        self.started = 0  # processes started

    def ask(self, request: dict[str, Any], budget_s: float) -> dict[str, Any]:
        """The answer to one request; Stopped when none came within `budget_s` (the
        process is then killed), JediProcessFailed when it died or could not start."""
        stream, sock = self._running()
        return self._exchange(stream, sock, request, budget_s)

    def _exchange(
        self,
        stream: io.BufferedIOBase,
        sock: socket.socket,
        request: dict[str, Any] | None,
        budget_s: float,
    ) -> dict[str, Any]:
        """Send `request` (None: nothing) and read one line within `budget_s`."""
        try:
            sock.settimeout(budget_s)
            if request is not None:
                stream.write(json.dumps(request).encode() + b"\n")
                stream.flush()
            line = stream.readline()
        except TimeoutError:
            self.stop()
            raise Stopped(f"no answer within {budget_s:.1f} s") from None
        except OSError as exc:
            self.stop()
            raise JediProcessFailed(f"the jedi process is gone ({exc})") from None
        if not line:
            self.stop()
            raise JediProcessFailed("the jedi process exited during a request")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _running(self) -> tuple[io.BufferedIOBase, socket.socket]:
        if self._stream is None or self._sock is None:
            self._start()
        assert self._stream is not None and self._sock is not None
        return self._stream, self._sock

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [sys.executable, "-m", CHILD_MODULE, "--fd", str(theirs.fileno())]
        if self.modules_kept is not None:
            command += ["--modules-kept", str(self.modules_kept)]
        try:
            self._proc = subprocess.Popen(
                command,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # `lsp --standalone` speaks LSP on our stdout
                start_new_session=True,  # a Ctrl-C in the daemon's terminal is the daemon's
            )
        except OSError as exc:
            ours.close()
            raise JediProcessFailed(f"could not start the jedi process: {exc}") from None
        finally:
            theirs.close()
        self._sock, self._stream = ours, ours.makefile("rwb")
        self.started += 1
        try:
            self._exchange(self._stream, ours, None, START_BUDGET_S)  # its "ready"
        except Stopped:
            raise JediProcessFailed(
                f"the jedi process was not ready in {START_BUDGET_S} s"
            ) from None

    def stop(self) -> None:
        """Kill the process (if any) and reap it; the next ask() starts another."""
        proc, sock, stream = self._proc, self._sock, self._stream
        self._proc = self._sock = self._stream = None
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
        if sock is not None:
            sock.close()
        if proc is not None:
            proc.kill()
            try:
                proc.wait(EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                logger.warning("the jedi process %d did not exit after SIGKILL", proc.pid)

    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None
