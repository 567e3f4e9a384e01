"""The bridges between synchronous and asynchronous code: one module for all of them.

- :func:`run_sync`: a coroutine's result from synchronous code (even under a running loop).
- :func:`iterate_in_thread`: an async iterator consumed from synchronous code.
- :func:`in_own_task`: an async generator produced by a task of its own, so a cancel from an
  anyio cancel scope (a disconnected client) becomes one clean asyncio cancel.
- :func:`raise_if_cancelled`: honour a cancel that a library below swallowed.
- :func:`to_thread`: ``asyncio.to_thread`` without importing asyncio up front.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

# asyncio is imported where it is used: a cold `citewise search` never starts a loop, and
# importing asyncio was a tenth of its CPU (benchmarks/cold-cli.md).
if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
P = ParamSpec("P")


async def to_thread(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread``, for modules that must not import asyncio when loaded."""
    import asyncio

    return await asyncio.to_thread(func, *args, **kwargs)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``; inside a running loop, on a worker thread of its own.

    asyncio.run refuses to nest, and the synchronous API (CLI, indexing, sync endpoints) may
    be called from code that already runs a loop, such as a notebook or an async test.
    """
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


_END = object()


def iterate_in_thread(make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
    """Iterate an async iterator from synchronous code, on a private loop in a worker thread.

    A private loop (not ``asyncio.run`` here) keeps this usable from code that already runs
    an event loop, such as a notebook or a server's synchronous handler. Closing the
    iterator early cancels the async one.
    """
    import asyncio

    items: queue.SimpleQueue[Any] = queue.SimpleQueue()

    async def pump() -> None:
        try:
            async for item in make():
                items.put(item)
        except BaseException as error:  # handed to the consumer's thread and raised there
            items.put(error)
        finally:
            items.put(_END)

    loop = asyncio.new_event_loop()
    task = loop.create_task(pump())

    def run() -> None:
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())

    thread = threading.Thread(target=run, name="citewise-async", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield cast(T, item)
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join()
        loop.close()


_TASKS: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones


async def in_own_task(items: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    """``items``, produced by a task of its own that closing this generator cancels.

    Starlette cancels a disconnected stream through an anyio cancel scope, which cancels
    again at every await: LangGraph's cleanup (cancel its node tasks, then wait for them)
    is cut short and the model's task streams on. A plain asyncio cancel of a separate
    task lets that cleanup run to the end, so the model is asked for nothing more.
    """
    import asyncio

    channel: asyncio.Queue[object] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        try:
            async with aclosing(items) as stream:
                async for item in stream:
                    await channel.put(item)
        except Exception as error:  # handed to the consumer and raised there
            await channel.put(error)
        else:
            await channel.put(_END)

    task = asyncio.create_task(pump(), name="citewise-stream")
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
    try:
        while (item := await channel.get()) is not _END:
            if isinstance(item, Exception):
                raise item
            yield cast(T, item)
    finally:
        task.cancel()


def raise_if_cancelled() -> None:
    """Raise ``CancelledError`` if the current task was asked to stop.

    Python 3.11's ``asyncio.wait_for`` loses a cancel that arrives as its awaited future
    completes (it returns the result instead; fixed in 3.12). ``langchain_openai`` wraps
    every streamed chunk in ``wait_for`` (its chunk timeout), so under load a client's
    disconnect often reached the answer's task exactly then and was dropped: the task,
    marked as cancelling, streamed the model's answer to the end (75 of 80 in the test).
    A streaming loop calls this after each chunk.
    """
    import asyncio

    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError("cancelled (a cancel swallowed below was honoured)")
