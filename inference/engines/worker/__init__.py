"""The engine in its own process: `WorkerEngine` (proxy.py) implements the Engine
interface in the daemon and forwards every call over a socketpair to a child process
(child.py) that builds the real engine with create_engine and holds the model and its
KV cache. A native crash, an OOM kill or a hang there costs the callers their pending
requests (a clear EngineError), never the daemon; the supervisor (supervisor.py)
restarts the child with backoff and kills one that stops answering."""

from __future__ import annotations

from .policy import WorkerPolicy
from .proxy import WorkerEngine
from .wire import WorkerDied

__all__ = ["WorkerDied", "WorkerEngine", "WorkerPolicy"]
