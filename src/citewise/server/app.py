"""The FastAPI app: the OpenAI-compatible API, the web chat page, health, metrics, KB admin."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response

from citewise import __version__
from citewise.config import Settings, environment
from citewise.kb import Library
from citewise.kb.diagnostics import DiagnosticsHistory
from citewise.kb.models import ModelFactory
from citewise.server import diagnostics, feedback, health, openai, widget
from citewise.server.apidocs import openapi_schema, swagger_page
from citewise.server.auth import AuthFirstMiddleware, require_api_key
from citewise.server.errors import APIError, install_error_handlers
from citewise.server.limits import BodyLimitMiddleware, BodyLimits, JSONCheckMiddleware
from citewise.server.logs import RequestMiddleware
from citewise.server.mcp_http import mount_mcp
from citewise.server.metrics import KnowledgeBaseSizes, Metrics, metrics_endpoint
from citewise.server.ratelimit import RateLimitMiddleware, rate_limit_from_env
from citewise.server.runtime import Runtime, ServerOptions
from citewise.server.tracing import Traces, traces_from_env
from citewise.server.widget import WidgetGate, WidgetKeys
from citewise.telemetry import Observer

log = logging.getLogger(__name__)

__all__ = ["create_app"]

_WEB_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def cors_origins(environ: Mapping[str, str] | None = None) -> list[str]:
    """The browser origins allowed to call the API (``CITEWISE_CORS_ORIGINS``, comma-separated,
    ``*`` for any): none by default, so other sites' pages cannot read its answers."""
    value = (environment() if environ is None else environ).get("CITEWISE_CORS_ORIGINS", "")
    return [origin.strip().rstrip("/") for origin in value.split(",") if origin.strip()]


def create_app(
    settings: Settings | None = None,
    options: ServerOptions | None = None,
    *,
    model_factory: ModelFactory | None = None,
    library: Library | None = None,
    tracer_provider: Any = None,
    widget_keys: WidgetKeys | None = None,
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
        tracer_provider: an OpenTelemetry tracer provider to trace requests with (default:
            OTLP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, else no traces).
        widget_keys: the widget's public keys and origins (default: ``CITEWISE_WIDGET_*``).
    """
    settings = settings or Settings.from_env()
    options = options or ServerOptions.from_env()
    widget_keys = widget_keys or WidgetKeys.from_env()
    metrics = Metrics()
    app = FastAPI(
        title="citewise",
        version=__version__,
        summary="Answers questions about a documentation set, citing the sections it used.",
        # Served below behind the API key: the schema and Swagger follow the API's auth.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    runtime = Runtime(settings, options, model_factory=model_factory, library=library)
    app.state.runtime = runtime
    app.state.metrics = metrics
    app.state.kb_sizes = KnowledgeBaseSizes(runtime)
    metrics.registry.register(app.state.kb_sizes)
    app.state.diagnostics = DiagnosticsHistory.of(settings)
    observers: list[Observer] = [app.state.diagnostics]
    traces = Traces(tracer_provider) if tracer_provider is not None else traces_from_env()
    if traces is not None:
        observers.append(traces)
    app.state.api_keys = options.api_keys
    app.state.admin_keys = options.admin_keys
    # Open without keys beyond loopback, as asked: questions yes, deleting knowledge bases no.
    app.state.admin_closed = options.insecure_no_auth and not options.admin_keys
    install_error_handlers(app)
    limits = BodyLimits.from_env()
    # Innermost: reads a JSON body only once the body limit has bounded it, and refuses
    # bad strings and deep nesting before any route sees them.
    app.add_middleware(JSONCheckMiddleware, max_depth=limits.depth)
    # Added early, so it runs inside the request middleware: a 413 is logged and counted.
    app.add_middleware(BodyLimitMiddleware, limits=limits)
    # Outside the body guards: a client without a key gets its 401 before any body is read.
    app.add_middleware(AuthFirstMiddleware)
    rate_limit = rate_limit_from_env()
    if rate_limit is not None:
        # Inside the request middleware: a 429 is logged and counted like any answer.
        app.add_middleware(RateLimitMiddleware, limit=rate_limit)
    if widget_keys.keys:
        # Inside the request middleware: a refused widget key is logged and counted.
        app.add_middleware(WidgetGate, widget=widget_keys)
    app.add_middleware(RequestMiddleware, metrics=metrics, observers=observers)
    # The widget's pages call the API from their own origins.
    origins = [*cors_origins(), *sorted(widget_keys.origins - set(cors_origins()))]
    if origins:
        # Outermost, so a browser's preflight is answered before the API key is asked for.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["*"],
            allow_headers=["*"],
            max_age=600,
        )

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    guarded = APIRouter(dependencies=[Depends(require_api_key)])
    guarded.add_api_route("/metrics", metrics_endpoint, include_in_schema=False)

    @guarded.get("/openapi.json", include_in_schema=False)
    async def openapi() -> JSONResponse:
        return JSONResponse(openapi_schema(app))

    @guarded.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return swagger_page("/openapi.json")

    app.include_router(guarded)
    app.include_router(health.router)
    app.include_router(openai.router)
    app.include_router(diagnostics.router)
    feedback.install(app, settings, metrics)
    app.include_router(widget.router)
    _include_knowledge_api(app)
    mount_mcp(app, runtime)
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

    @router.get("/favicon.ico")
    async def favicon() -> Response:
        # Browsers and tools ask for it whatever the page links: an icon, not a 404 per load.
        return Response((web / "favicon.svg").read_text(encoding="utf-8"),
                        media_type="image/svg+xml")  # fmt: skip

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
