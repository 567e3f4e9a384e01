"""``/mcp``: the library tools (:mod:`citewise.mcp_libraries`) over MCP's streamable HTTP,
inside ``citewise serve``, behind the same API keys as the OpenAI routes (401 without).

Stateless: each POST is a whole exchange, so any worker answers it. The SDK's session
manager needs a running task group; it is started on the first request, inside the
server's event loop, so the route works whether or not the app's lifespan runs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from citewise.errors import MissingExtraError
from citewise.server.auth import require_api_key
from citewise.server.errors import APIError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from citewise.server.runtime import Runtime

log = logging.getLogger(__name__)

PATH = "/mcp"

__all__ = ["PATH", "mount_mcp"]


class _Endpoint:
    """The SDK's ASGI endpoint, behind the API key, its session manager started once."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._app: Any = None
        self._ready: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def _start(self) -> Any:
        async with self._lock:
            if self._app is not None:
                return self._app
            from mcp.server.transport_security import TransportSecuritySettings

            from citewise.kb.multi import KnowledgeBases
            from citewise.mcp_libraries import build_library_server

            kbs = KnowledgeBases(self.runtime.library)
            server = await asyncio.to_thread(build_library_server, kbs)
            # The API keys guard the route; the Host header is the proxy's business.
            security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
            starlette = server.streamable_http_app(
                streamable_http_path=PATH, stateless_http=True, json_response=True,
                transport_security=security,
            )  # fmt: skip
            ready = asyncio.Event()

            async def run() -> None:
                async with server.session_manager.run():
                    ready.set()
                    await asyncio.Event().wait()  # until the loop ends

            self._task = asyncio.get_running_loop().create_task(run())
            await ready.wait()
            route = starlette.routes[0]
            assert isinstance(route, Route)
            self._app = route.endpoint
            return self._app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        try:
            await require_api_key(request)
        except APIError as error:
            await error.response()(scope, receive, send)
            return
        app = self._app or await self._start()
        await app(scope, receive, send)


def mount_mcp(app: FastAPI, runtime: Runtime) -> None:
    """Add ``/mcp`` to ``app`` when the MCP SDK is installed (``citewise[mcp]``)."""
    try:
        from citewise.mcp_server import _mcp_classes

        _mcp_classes()
    except MissingExtraError:
        log.debug("no /mcp: the mcp extra is not installed")
        return
    endpoint = _Endpoint(runtime)
    app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
