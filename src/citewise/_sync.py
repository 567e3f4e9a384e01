"""Run a coroutine to completion from synchronous code, even under a running event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``; inside a running loop, on a worker thread of its own.

    asyncio.run refuses to nest, and the synchronous API (CLI, indexing, sync endpoints) may
    be called from code that already runs a loop, such as a notebook or an async test.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
