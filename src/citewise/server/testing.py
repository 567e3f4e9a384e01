"""Run an ASGI app on a real socket in a background thread (tests and the load check)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

__all__ = ["running"]


@contextmanager
def running(app: Any, *, host: str = "127.0.0.1", **options: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free port of ``host``; yields its base URL.

    ``options`` go to ``uvicorn.Config`` (``citewise.server.receipt.uvicorn_options()``:
    the protocol and keep-alive ``citewise serve`` runs with). The server stops (and its
    thread ends) when the block exits.
    """
    config = uvicorn.Config(
        app, host=host, port=0, log_level="warning", lifespan="off", access_log=False,
        **options,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="citewise-uvicorn", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server failed to start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join()
