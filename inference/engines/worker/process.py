"""One engine worker process and the daemon's end of its socketpair: starts the child,
reads its frames in a thread, matches replies to the calls waiting for them, and the
moment the socket reaches EOF (the child died, whatever killed it) fails every call in
flight with WorkerDied. A WorkerProcess dies once; the supervisor starts the next."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ...msgpack_frames import FrameError
from ..api import CancelEvent, EngineError
from ..options import EngineOptions
from .frames import ChannelClosed, FrameChannel
from .wire import WorkerDied, error_from_wire, options_to_wire

logger = logging.getLogger(__name__)
CHILD_MODULE = "shadowtab.inference.engines.worker.child"
CANCEL_POLL_S = 0.02  # how often a waiting call looks at its cancel event
EXIT_WAIT_S = 5.0  # after EOF, how long the child gets to be reaped before a SIGKILL

# ("reply", result) | ("error", EngineError) | ("cancelled", None): the caller's cancel
Item = tuple[str, Any]


class WorkerProcess:
    def __init__(
        self, options: EngineOptions, beat_s: float, on_change: Callable[[], None]
    ) -> None:
        self._on_change = on_change
        self.started = time.monotonic()
        self.last_frame = self.started
        self.stalled_s = 0.0
        self.progress = 0.0
        self.stats: dict[str, Any] = {}
        self.load_error: EngineError | None = None
        self.ready = threading.Event()
        self.exited = threading.Event()
        self.exit_description = ""
        self.kill_reason: str | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, queue.Queue[Item]] = {}
        self._dead = False
        self.proc, self.channel = self._spawn()
        self.pid = self.proc.pid
        init = {"op": "init", "options": options_to_wire(options), "beat_s": beat_s}
        with contextlib.suppress(ChannelClosed):  # died at once: the reader reports how
            self.channel.send(init)
        self._reader = threading.Thread(
            target=self._read, name=f"shadowtab-worker-{self.pid}-reader", daemon=True
        )
        self._reader.start()

    @staticmethod
    def _spawn() -> tuple[subprocess.Popen[bytes], FrameChannel]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE, "--fd", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # `lsp --standalone` speaks LSP on our stdout
                start_new_session=True,  # a Ctrl-C in the daemon's terminal is the daemon's
            )
        except OSError as exc:
            ours.close()
            raise EngineError(f"could not start the engine worker: {exc}") from None
        finally:
            theirs.close()
        return proc, FrameChannel(ours)

    # frames from the worker

    def _read(self) -> None:
        try:
            while True:
                message = self.channel.recv()
                self.last_frame = time.monotonic()
                self._dispatch(message)
        except ChannelClosed:
            pass
        except FrameError as exc:  # the stream cannot be trusted any more
            self.kill(f"sent a bad frame ({exc})")
        self._died()

    def _dispatch(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "beat":
            self.stalled_s = float(message.get("stalled_s") or 0.0)
        elif op == "progress":
            self.progress = max(0.0, min(1.0, float(message.get("value") or 0.0)))
            self._on_change()
        elif op == "ready":
            self.stats = dict(message.get("stats") or {})
            self.progress = 1.0
            self.ready.set()
            self._on_change()
        elif op == "load_failed":
            self.load_error = error_from_wire(message.get("type"), message.get("message"))
        elif op in ("reply", "error"):
            self._deliver(message)
        else:
            logger.warning("engine worker %d sent an unknown op %r", self.pid, op)

    def _deliver(self, message: dict[str, Any]) -> None:
        with self._lock:
            waiting = self._pending.get(message.get("id", -1))
        if waiting is None:
            return  # a call its caller abandoned
        if message["op"] == "reply":
            if isinstance(message.get("stats"), dict):
                self.stats = message["stats"]
            waiting.put(("reply", message.get("result")))
        else:
            waiting.put(("error", error_from_wire(message.get("type"), message.get("message"))))

    def _died(self) -> None:
        try:
            code = self.proc.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:  # it closed its socket but lives on: end it
            self.kill("closed its socket but did not exit")
            code = self.proc.wait()
        self.exit_description = self.kill_reason or describe_exit(code)
        error = WorkerDied(
            f"the engine worker {self.exit_description} during the request; the daemon restarts it"
        )
        with self._lock:
            self._dead = True
            pending, self._pending = self._pending, {}
        self.exited.set()  # first: a caller that sees the error sees a dead worker too
        for waiting in pending.values():
            waiting.put(("error", error))
        self.channel.close()
        self._on_change()

    # calls from the daemon

    def call(self, method: str, args: dict[str, Any], cancel: threading.Event | None) -> Any:
        """The worker's result for `method` (plain data); its error re-raised as the same
        EngineError class; WorkerDied when it dies first."""
        request_id, waiting = self._register()
        cancel_sent = answered = False
        # a CancelEvent wakes the wait at once: the worker stops the pass in flight
        stop_watching = (
            cancel.when_set(lambda: waiting.put(("cancelled", None)))
            if isinstance(cancel, CancelEvent)
            else None
        )
        try:
            self._send({"op": "call", "id": request_id, "method": method, "args": args})
            while True:
                if cancel is not None and cancel.is_set() and not cancel_sent:
                    cancel_sent = self._send_cancel(request_id)
                try:
                    kind, value = waiting.get(timeout=CANCEL_POLL_S if cancel else None)
                except queue.Empty:
                    continue
                if kind == "cancelled":
                    continue  # sent above; the worker's answer follows
                answered = True
                if kind == "error":
                    raise value
                return value
        finally:
            if stop_watching is not None:
                stop_watching()
            if not (cancel_sent or answered or self._dead):
                self._send_cancel(request_id)  # the caller gave up before the answer
            self._unregister(request_id)

    def _register(self) -> tuple[int, queue.Queue[Item]]:
        with self._lock:
            if self._dead:
                raise WorkerDied(f"the engine worker {self.exit_description}")
            request_id = next(self._ids)
            waiting: queue.Queue[Item] = queue.Queue()
            self._pending[request_id] = waiting
        return request_id, waiting

    def _unregister(self, request_id: int) -> None:
        with self._lock:
            self._pending.pop(request_id, None)

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.channel.send(message)
        except FrameError as exc:  # e.g. a prompt over the frame limit: this call only
            raise EngineError(f"the request cannot be sent to the engine worker: {exc}") from None
        except ChannelClosed:
            # the reader sees the same EOF and fails this call; wait for that verdict
            self.exited.wait(EXIT_WAIT_S + 1)
            raise WorkerDied(f"the engine worker {self.exit_description or 'died'}") from None

    def _send_cancel(self, request_id: int) -> bool:
        with contextlib.suppress(ChannelClosed):  # dead: the call fails with WorkerDied
            self.channel.send({"op": "cancel", "id": request_id})
        return True

    # lifecycle

    def close(self, grace_s: float) -> None:
        """Ask the worker to close its engine and exit; kill it after grace_s."""
        with contextlib.suppress(ChannelClosed):
            self.channel.send({"op": "close"})
        if not self.exited.wait(grace_s):
            self.kill("did not exit when asked to close")
            self.exited.wait(EXIT_WAIT_S + 1)

    def kill(self, reason: str) -> None:
        """SIGKILL; calls in flight fail with `reason` ("was killed: REASON")."""
        if self.kill_reason is None:
            self.kill_reason = f"was killed: it {reason}"
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.kill(self.pid, signal.SIGKILL)

    @property
    def alive(self) -> bool:
        return not self.exited.is_set()


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"
