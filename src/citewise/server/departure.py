"""A whole (non-streamed) answer stops when its client leaves.

Starlette cancels a streamed response when the client disconnects, but a plain endpoint
runs to the end: a client that timed out after 1 s still had its answer written by the
model, token by token (80 of 80 in the test). :func:`unless_client_leaves` runs the work
beside a watch on the request's ``http.disconnect`` and cancels the work when it comes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from fastapi import Request

from citewise.server.errors import APIError

__all__ = ["unless_client_leaves"]

T = TypeVar("T")

# nginx's "client closed request": logged and counted, never seen by the client.
CLIENT_GONE = 499


async def _departure(request: Request) -> None:
    # The body was read before the route ran: what comes next is the disconnect.
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_client_leaves(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """The result of ``work``; if the client disconnects first, ``work`` is cancelled (its
    model calls with it) and a 499 is raised for the logs."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_departure(request))
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
    if not task.done() or task.cancelled():
        raise APIError(CLIENT_GONE, "the client closed the request", code="client_closed_request")
    return task.result()
