"""Prometheus metrics: requests, latency, errors and searches, on a registry of each app's own."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Metrics", "MetricsMiddleware", "metrics_endpoint"]

# Streams last as long as the answer: the buckets reach well past a slow model's minute.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass
class Metrics:
    """The server's metrics; a registry per app keeps apps (and tests) from sharing counts."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.requests = Counter(
            "citewise_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "citewise_request_duration_seconds",
            "Time from request to the last byte of the response (whole streams)",
            ["route"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "citewise_errors",
            "Errors by HTTP status, or by error class for answers that failed mid-stream",
            ["route", "type"],
            registry=self.registry,
        )
        self.searches = Counter(
            "citewise_searches",
            "Searches of a knowledge base made to answer requests",
            ["kb"],
            registry=self.registry,
        )

    def count_search(self, kb: str) -> None:
        """Count one search of ``kb`` (the ``on_search`` of an answer)."""
        self.searches.labels(kb=kb).inc()


class MetricsMiddleware:
    """Counts and times every HTTP request; the route label is the route's path template,
    so ``/v1/models/{model_id}`` stays one series whatever ids clients ask for."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(label, scope["method"], str(status)).inc()
            self.metrics.latency.labels(label).observe(time.perf_counter() - started)
            if status >= 400:
                self.metrics.errors.labels(label, str(status)).inc()


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
