"""The engine worker's main: `python -m shadowtab.inference.engines.worker.child --fd N`,
N being this end of a socketpair the daemon made. Reads the options, builds the engine
with create_engine (reporting load progress), then serves calls, one thread per call
(the engines are thread-safe and serialize their own work), until the daemon says
close or its end of the socket goes away."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from ...msgpack_frames import FrameError
from .. import create_engine
from ..api import CancelEvent, Engine, EngineError
from ..load_failure import describe_load_failure
from .frames import ChannelClosed, FrameChannel
from .wire import CALLS, GENERATING, error_to_wire, options_from_wire, result_to_wire

logger = logging.getLogger("shadowtab.engine_worker")
LOAD_FAILED_EXIT = 3  # the model could not load: the daemon does not restart the worker


class WatchedEvent(CancelEvent):
    """A cancel event that remembers when the engine last looked at it: engines check
    their cancel event before every forward pass, so a generation whose event has not
    been looked at for long is stuck in native code (see Requests.stalled_s)."""

    def __init__(self) -> None:
        super().__init__()
        self.checked = time.monotonic()

    def is_set(self) -> bool:
        self.checked = time.monotonic()
        return super().is_set()


class Requests:
    """The calls in flight, by id, with their cancel events."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[int, tuple[WatchedEvent, bool]] = {}

    def add(self, request_id: int, generating: bool) -> WatchedEvent:
        event = WatchedEvent()
        with self._lock:
            self._events[request_id] = (event, generating)
        return event

    def remove(self, request_id: int) -> None:
        with self._lock:
            self._events.pop(request_id, None)

    def cancel(self, request_id: int) -> None:
        with self._lock:
            entry = self._events.get(request_id)
        if entry is not None:
            entry[0].set()

    def stalled_s(self) -> float:
        """Seconds since any generating call last reached a forward pass (0 when none
        runs): one that progresses is enough, the others may wait for the engine."""
        with self._lock:
            checks = [event.checked for event, generating in self._events.values() if generating]
        return time.monotonic() - max(checks) if checks else 0.0


class WorkerServer:
    def __init__(self, channel: FrameChannel, engine: Engine) -> None:
        self.channel = channel
        self.engine = engine
        self.requests = Requests()

    def serve(self) -> None:
        """Until "close" or EOF; a bad frame from the daemon is logged and skipped."""
        while True:
            try:
                message = self.channel.recv()
            except ChannelClosed:
                return
            except FrameError as exc:
                logger.error("bad frame from the daemon: %s", exc)
                continue
            op = message.get("op")
            if op == "close":
                return
            if op == "cancel":
                self.requests.cancel(_request_id(message))
            elif op == "call":
                self._start(message)
            else:
                logger.error("unknown op from the daemon: %r", op)

    def _start(self, message: dict[str, Any]) -> None:
        request_id = _request_id(message)
        method = str(message.get("method"))
        cancel = self.requests.add(request_id, method in GENERATING)
        thread = threading.Thread(
            target=self._run,
            args=(request_id, method, message.get("args") or {}, cancel),
            name=f"shadowtab-worker-call-{request_id}",
            daemon=True,
        )
        thread.start()

    def _run(
        self, request_id: int, method: str, args: dict[str, Any], cancel: WatchedEvent
    ) -> None:
        try:
            result = self._call(method, args, cancel)
            reply = {"op": "reply", "id": request_id, "result": result_to_wire(result)}
            if method != "stats":  # every reply refreshes the daemon's copy of stats()
                reply["stats"] = self.engine.stats()
        except BaseException as exc:  # every failure goes back to the caller
            kind, text = error_to_wire(exc)
            reply = {"op": "error", "id": request_id, "type": kind, "message": text}
        finally:
            self.requests.remove(request_id)
        with contextlib.suppress(ChannelClosed):  # the daemon is gone: serve() ends too
            self.channel.send(reply)

    def _call(self, method: str, args: dict[str, Any], cancel: WatchedEvent) -> Any:
        if method not in CALLS or not hasattr(self.engine, method):
            raise EngineError(f"the engine has no method {method!r}")
        if method in GENERATING:
            return getattr(self.engine, method)(**args, cancel=cancel)
        return getattr(self.engine, method)(**args)


def _request_id(message: dict[str, Any]) -> int:
    value = message.get("id")
    return value if isinstance(value, int) else -1


class Heartbeat:
    """Tells the daemon we are alive (and how long generation has been stuck) until the
    socket goes away. A stopped process, or one hung in code that holds the GIL, sends
    nothing: the daemon's deadline then kills it."""

    def __init__(self, channel: FrameChannel, interval_s: float) -> None:
        self.channel = channel
        self.interval_s = interval_s
        self.requests: Requests | None = None  # set once the engine serves calls

    def start(self) -> None:
        threading.Thread(target=self._run, name="shadowtab-worker-beat", daemon=True).start()

    def _run(self) -> None:
        while True:
            requests = self.requests
            stalled = requests.stalled_s() if requests is not None else 0.0
            try:
                self.channel.send({"op": "beat", "stalled_s": stalled})
            except ChannelClosed:
                return
            time.sleep(self.interval_s)


def load(channel: FrameChannel, message: dict[str, Any]) -> Engine:
    def on_progress(fraction: float) -> None:
        channel.send({"op": "progress", "value": float(fraction)})

    return create_engine(options_from_wire(message.get("options") or {}), on_progress)


def run(channel: FrameChannel) -> int:
    init = channel.recv()
    heartbeat = Heartbeat(channel, float(init.get("beat_s") or 0.5))
    heartbeat.start()  # during the load too: a load can take minutes
    try:
        engine = load(channel, init)
    except Exception as exc:  # a load failure is reported, the daemon decides what next
        kind, _ = error_to_wire(exc)
        channel.send({"op": "load_failed", "type": kind, "message": describe_load_failure(exc)})
        return LOAD_FAILED_EXIT
    server = WorkerServer(channel, engine)
    heartbeat.requests = server.requests
    channel.send({"op": "ready", "stats": engine.stats()})
    server.serve()
    engine.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="shadowtab engine worker (started by the daemon)")
    parser.add_argument("--fd", type=int, required=True, help="this end of the socketpair")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="engine worker: %(message)s"
    )
    channel = FrameChannel(socket.socket(fileno=args.fd))
    try:
        code = run(channel)
    except ChannelClosed:
        code = 0  # the daemon went away: nothing left to serve
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads may sit in native code (a generation the daemon abandoned): do not wait.
    os._exit(code)


if __name__ == "__main__":
    main()
