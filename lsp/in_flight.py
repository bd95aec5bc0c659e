"""What pygls gets wrong for a long-lived session: the errors that are the client's or
routine (logged at DEBUG), and `shutdown` with requests in flight (answered, all of them, before
the shutdown itself)."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future as ConcurrentFuture
from typing import TYPE_CHECKING, Any

from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcParseError,
    JsonRpcRequestCancelled,
)

if TYPE_CHECKING:
    from pygls.protocol import LanguageServerProtocol

CLIENT_ERRORS = (
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcParseError,
    JsonRpcRequestCancelled,
)
# Answered ContentModified: a newer keystroke made the prediction stale, or it waited too
# long for the model. Every superseded keystroke's request ends so: routine, not a warning.
ROUTINE_ERRORS = (*CLIENT_ERRORS, JsonRpcContentModified)
IN_FLIGHT_GRACE_S = 5.0  # a request running in a thread cannot be cancelled: wait this long


async def finish_in_flight(protocol: LanguageServerProtocol, shutdown_id: Any) -> None:
    """Cancel every request in flight but `shutdown_id` and wait until each is answered
    (pygls answers a cancelled one with RequestCancelled from its done callback)."""
    this_step = asyncio.current_task()  # pygls files it under a fresh uuid
    pending = [
        future
        for msg_id, future in list(protocol._request_futures.items())
        if msg_id != shutdown_id and future is not this_step and not future.done()
    ]
    for future in pending:
        future.cancel()
    waiting = [asyncio.wrap_future(f) if isinstance(f, ConcurrentFuture) else f for f in pending]
    if waiting:
        await asyncio.wait(waiting, timeout=IN_FLIGHT_GRACE_S)
    await asyncio.sleep(0)  # done callbacks (the replies) run before the shutdown reply
