"""The running daemon: its control socket, its LSP socket and the hub behind them.

The sockets and the status file come up first, so `status` answers at once; the hub
(and through it the model) is built next, in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import import_module
from typing import TYPE_CHECKING, Any

from shadowtab.daemon.allocations import top_allocations
from shadowtab.daemon.config import Settings
from shadowtab.daemon.control_server import (
    ControlServer,
    UnknownCommand,
    bind_unix_socket,
    cancel_and_wait,
    track_current_task,
)
from shadowtab.daemon.runtime_files import RuntimeFiles, remove_file, write_status
from shadowtab.daemon.thread_census import thread_census

if TYPE_CHECKING:
    from shadowtab.lsp.hub import Hub

logger = logging.getLogger(__name__)

HUB_CLOSE_TIMEOUT_S = 8.0  # sessions closed, journals flushed; the CLI kills after 10 s
HUB_WAIT_TIMEOUT_S = 30.0  # how long a hub command waits for the hub to be built


def package_version() -> str:
    from importlib.metadata import version

    return version("shadowtab")


class DaemonService:
    def __init__(
        self, settings: Settings, files: RuntimeFiles, on_ready: Callable[[], None] | None = None
    ) -> None:
        self.settings = settings
        self._on_ready = on_ready  # tells the launcher the sockets are up
        self.files = files
        self.pid = os.getpid()
        self.version = package_version()
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._started_monotonic = time.monotonic()
        self.hub: Hub | None = None
        self.hub_error: str | None = None
        self._hub_ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self.control = ControlServer(files.control_socket, self.handle)
        self._lsp_server: asyncio.Server | None = None
        self._lsp_connections: set[asyncio.Task[Any]] = set()

    async def serve(self) -> None:
        """Run until `stop` or SIGTERM/SIGINT, then shut down gracefully."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.request_stop, signal.Signals(signum).name)
        await self.control.start()
        self._lsp_server = await bind_unix_socket(self.files.lsp_socket, self._serve_lsp)
        write_status(self.files.status_file, self.status_record())
        logger.info("daemon %s ready (pid %d): %s", self.version, self.pid, self.status_record())
        if self._on_ready is not None:
            self._on_ready()
        hub_task = asyncio.create_task(self._start_hub())
        await self._stopping.wait()
        await self._shutdown(hub_task)

    async def _start_hub(self) -> None:
        try:
            # Imports (pygls, lsprotocol, ...) run in a thread: `status` keeps answering.
            options = await asyncio.to_thread(self.settings.hub_options)
            hub_module = await asyncio.to_thread(import_module, "shadowtab.lsp.hub")
            agent_module = await asyncio.to_thread(import_module, "shadowtab.daemon.agent_commands")
            hub = hub_module.Hub(options)
            agent_module.add_agent_commands(hub)  # the agents' verbs: this socket only
            self.hub = hub
            await self.hub.start()
            logger.info("hub started; engine %s", self.settings.engine.kind)
        except Exception as exc:
            logger.exception("the hub failed to start")
            self.hub_error = f"{type(exc).__name__}: {exc}"
        finally:
            self._hub_ready.set()

    def request_stop(self, reason: str) -> None:
        if not self._stopping.is_set():
            logger.info("stopping: %s", reason)
            # Gone before anyone hears back: a new `start` never finds a dying daemon.
            remove_file(self.files.status_file)
            self._stopping.set()

    async def _shutdown(self, hub_task: asyncio.Task[None]) -> None:
        remove_file(self.files.status_file)
        await self.control.close()
        if self._lsp_server is not None:
            self._lsp_server.close()
        remove_file(self.files.lsp_socket)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(hub_task, HUB_CLOSE_TIMEOUT_S)
        if self.hub is not None:
            try:
                await asyncio.wait_for(self.hub.close(), HUB_CLOSE_TIMEOUT_S)
            except TimeoutError:
                logger.error("the hub did not close within %s s", HUB_CLOSE_TIMEOUT_S)
            except Exception:
                logger.exception("the hub failed to close")
        await cancel_and_wait(self._lsp_connections)
        logger.info("daemon stopped")

    async def _serve_lsp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with track_current_task(self._lsp_connections):
            try:
                await self._hub_ready.wait()
                if self.hub is not None:
                    await self.hub.serve_connection(reader, writer)
            except asyncio.CancelledError:
                pass  # the daemon is stopping
            except Exception:
                logger.exception("LSP connection failed")
            finally:
                writer.close()

    async def handle(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        """A control command; see control_server.Handler for the error conventions."""
        if cmd == "status":
            return self.status_reply()
        if cmd == "stop":
            self.request_stop("stop command")
            return {"stopping": True, "pid": self.pid}
        if cmd == "stats":
            reply: dict[str, Any] = {"daemon": self.status_record(), "hub": self._hub_view("stats")}
            if (held := top_allocations()) is not None:  # PYTHONTRACEMALLOC=1 only
                reply["allocations"] = held
            return reply
        hub = await self._ready_hub()
        if hub is None or cmd not in hub.control_commands():
            raise UnknownCommand(cmd)
        return await hub.control(cmd, args)

    async def _ready_hub(self) -> Hub | None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._hub_ready.wait(), HUB_WAIT_TIMEOUT_S)
        return self.hub

    def status_record(self) -> dict[str, Any]:
        """What the status file holds."""
        return {
            "pid": self.pid,
            "control_socket": str(self.files.control_socket),
            "lsp_socket": str(self.files.lsp_socket),
            "version": self.version,
            "started_at": self.started_at,
            "log_file": str(self.files.log_file),
        }

    def status_reply(self) -> dict[str, Any]:
        hub_status = self._hub_view("status")
        engine = hub_status.get("engine") or {
            "state": "failed" if self.hub_error else "starting",
            "progress": 0.0,
            "error": self.hub_error,
            "model": None,
        }
        return {
            **self.status_record(),
            "status_file": str(self.files.status_file),
            "uptime_s": round(time.monotonic() - self._started_monotonic, 3),
            "engine": engine,
            "hub": hub_status,
            "config": self.settings.describe(),
            "threads": thread_census(),
        }

    def _hub_view(self, method: str) -> dict[str, Any]:
        if self.hub is None:
            return {"state": "failed", "error": self.hub_error} if self.hub_error else {}
        try:
            view: dict[str, Any] = getattr(self.hub, method)()
        except Exception as exc:
            logger.exception("hub.%s() failed", method)
            return {"error": f"{type(exc).__name__}: {exc}"}
        return view
