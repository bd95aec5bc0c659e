"""Waiting for the daemon's model, for commands that need it (`shadowtab demo`): load
progress printed as it changes, and an end within seconds when the load failed, with the
reason and what to do, never a silent wait."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

MODEL_READY_TIMEOUT_S = 300.0  # the first start converts and times the weights: minutes
POLL_S = 0.2


class ModelUnavailable(RuntimeError):
    """The model failed to load, is switched off, or did not load in time."""


def wait_for_model(
    timeout_s: float = MODEL_READY_TIMEOUT_S, show: Callable[[str], None] = print
) -> dict[str, Any]:
    """Block until the daemon reports its engine ready; returns the engine's status.
    Raises ModelUnavailable (its message says why and what to do) or ControlError."""
    from shadowtab.daemon.client import request

    deadline = time.monotonic() + timeout_s
    shown = ""
    while True:
        engine = request("status").get("engine", {})
        line = progress_line(engine)
        if line != shown:
            show(line)
            shown = line
        state = engine.get("state")
        if state == "ready":
            return engine
        if state == "failed":
            raise ModelUnavailable(f"the model failed to load: {engine.get('error')}")
        if state == "off":
            raise ModelUnavailable(
                'the model is switched off (engine.kind = "off"); set engine.kind in '
                "shadowtab.toml to use one"
            )
        if time.monotonic() >= deadline:
            raise ModelUnavailable(
                f"the model did not load within {timeout_s:.0f} s (it was {line!r}); "
                "`shadowtab daemon status` shows its progress, the daemon's log why it is slow"
            )
        time.sleep(POLL_S)


def progress_line(engine: dict[str, Any]) -> str:
    state = engine.get("state")
    model = engine.get("model") or ""
    if state == "loading":
        return f"model: loading {engine.get('progress', 0):.0%} {model}".rstrip()
    return f"model: {state} {model}".rstrip()
