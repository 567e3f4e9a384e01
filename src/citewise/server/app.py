"""The FastAPI app: the OpenAI-compatible API, the web chat page, health, metrics, KB admin."""

from __future__ import annotations

import importlib
import logging
from importlib.resources import files

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import HTMLResponse, Response

from citewise import __version__
from citewise.config import Settings
from citewise.kb import Library
from citewise.kb.models import ModelFactory
from citewise.server import openai
from citewise.server.auth import require_api_key
from citewise.server.errors import APIError, install_error_handlers
from citewise.server.metrics import Metrics, MetricsMiddleware, metrics_endpoint
from citewise.server.runtime import Runtime, ServerOptions

log = logging.getLogger(__name__)

__all__ = ["create_app"]

_WEB_TYPES = {".js": "text/javascript", ".css": "text/css"}


def create_app(
    settings: Settings | None = None,
    options: ServerOptions | None = None,
    *,
    model_factory: ModelFactory | None = None,
    library: Library | None = None,
) -> FastAPI:
    """The citewise server.

    Args:
        settings: data and model settings (default: from ``CITEWISE_*``).
        options: default knowledge base, release and keys (default: from ``CITEWISE_*``).
        model_factory: makes the chat model on first use, instead of the one ``settings``
            configure (None from it: extractive answers). Tests and the load check inject
            a scripted model here.
        library: the knowledge bases to serve (default: a library of ``settings`` made for
            this app); every route opens knowledge bases through it.
    """
    settings = settings or Settings.from_env()
    options = options or ServerOptions.from_env()
    metrics = Metrics()
    app = FastAPI(
        title="citewise",
        version=__version__,
        summary="Answers questions about a documentation set, citing the sections it used.",
    )
    app.state.runtime = Runtime(settings, options, model_factory=model_factory, library=library)
    app.state.metrics = metrics
    app.state.api_keys = options.api_keys
    app.state.admin_keys = options.admin_keys
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware, metrics=metrics)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    guarded = APIRouter(dependencies=[Depends(require_api_key)])
    guarded.add_api_route("/metrics", metrics_endpoint, include_in_schema=False)
    app.include_router(guarded)
    app.include_router(openai.router)
    _include_knowledge_api(app)
    app.include_router(_web_router())
    return app


def _include_knowledge_api(app: FastAPI) -> None:
    """The knowledge-base REST API (``citewise.server.knowledge``), when it is installed."""
    try:
        module = importlib.import_module("citewise.server.knowledge")
    except ModuleNotFoundError as error:
        if error.name != "citewise.server.knowledge":
            raise  # the module exists but something it imports does not: a real error
        log.debug("no knowledge-base REST API in this build")
        return
    app.include_router(module.router)


def _web_router() -> APIRouter:
    """``GET /``: the chat page and its script and style, package data read on each request
    (small files; no build step, no static-files machinery)."""
    web = files("citewise.server") / "web"
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def index() -> HTMLResponse:
        return HTMLResponse((web / "index.html").read_text(encoding="utf-8"))

    @router.get("/web/{name}")
    async def asset(name: str) -> Response:
        suffix = name[name.rfind(".") :] if "." in name else ""
        if suffix not in _WEB_TYPES or "/" in name or name.startswith("."):
            raise APIError(404, f"no file {name!r}", code="not_found")
        resource = web / name
        if not resource.is_file():
            raise APIError(404, f"no file {name!r}", code="not_found")
        return Response(resource.read_text(encoding="utf-8"), media_type=_WEB_TYPES[suffix])

    return router
