"""Prometheus metrics: requests, latency, stages, model calls, search and answer quality, and
the size of each knowledge base, on a registry of each app's own.

Names follow Prometheus conventions (base units, ``_total`` counters, ``_seconds``); labels
are bounded: route templates, knowledge-base names, workflow names, stage names, outcomes.
With ``PROMETHEUS_MULTIPROC_DIR`` set (several worker processes), ``/metrics`` sums every
process's samples through prometheus-client's multiprocess mode.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

from citewise.config import environment
from citewise.kb import WORKFLOWS
from citewise.telemetry import OPERATION, RECORD, STAGE, Event

# No `*_created` series beside every counter and histogram: a timestamp per label set that
# no dashboard reads (the OpenMetrics exposition alone needs it, and Prometheus scrapes text).
disable_created_metrics()  # type: ignore[no-untyped-call]

if TYPE_CHECKING:
    from citewise.server.logs import RequestContext
    from citewise.server.runtime import Runtime

__all__ = ["KnowledgeBaseSizes", "Metrics", "metrics_endpoint"]

# Streams last as long as the answer: the buckets reach well past a slow model's minute.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_RATIO_BUCKETS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
_COUNT_BUCKETS = (0, 1, 2, 3, 5, 8, 13, 21)
OTHER = "other"


_FINDINGS = (
    "unsupported_tokens",
    "outside_links",
    "unsupported_citations",
    "attributed_citations",
    "unsupported_blocks",
)


class _Bounded:
    """A label's values: the first ``limit`` distinct ones, then ``other`` (so a client that
    invents names cannot grow the series without end)."""

    def __init__(self, limit: int, allowed: tuple[str, ...] = ()) -> None:
        self.limit = limit
        self.allowed = allowed
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, value: str | None) -> str:
        value = value or ""
        if self.allowed:
            return value if value in self.allowed else OTHER
        with self.lock:
            if value in self.seen or len(self.seen) < self.limit:
                self.seen.add(value)
                return value
        return OTHER


@dataclass
class Metrics:
    """The server's metrics; a registry per app keeps apps (and tests) from sharing counts."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        def counter(name: str, doc: str, labels: list[str]) -> Counter:
            return Counter(name, doc, labels, registry=self.registry)

        def histogram(
            name: str, doc: str, labels: list[str], buckets: tuple[float, ...] = _BUCKETS
        ) -> Histogram:
            return Histogram(name, doc, labels, buckets=buckets, registry=self.registry)

        self.kb = _Bounded(200)
        self.model = _Bounded(0, tuple(WORKFLOWS))
        self.name = _Bounded(40)  # stage and model-call purposes: set by code, not clients
        self.requests = counter(
            "citewise_requests", "HTTP requests by route, method, model and status",
            ["route", "method", "model", "status"],
        )  # fmt: skip
        self.latency = histogram(
            "citewise_request_duration_seconds",
            "Time from request to the last byte of the response (whole streams)", ["route"],
        )  # fmt: skip
        self.first_token = histogram(
            "citewise_time_to_first_token_seconds",
            "Time from request to the first piece of the answer", ["route", "model"],
        )  # fmt: skip
        self.errors = counter(
            "citewise_errors",
            "Errors by HTTP status, or by error class for answers that failed mid-stream",
            ["route", "type"],
        )
        self.operations = counter(
            "citewise_operations", "Ingests, searches, answers and deletes by outcome",
            ["operation", "kb", "outcome"],
        )  # fmt: skip
        self.operation_seconds = histogram(
            "citewise_operation_duration_seconds", "Duration of each operation",
            ["operation", "kb"],
        )  # fmt: skip
        self.stage_seconds = histogram(
            "citewise_stage_duration_seconds",
            "Duration of each stage (plan, search, embed_query, dense, keyword, fuse, rerank, "
            "expand, generate; parse, chunk, embed, store) within its operation",
            ["operation", "stage"],
        )
        self.searches = counter("citewise_searches", "Searches of a knowledge base", ["kb"])
        self.zero_results = counter(
            "citewise_search_zero_results", "Searches that found nothing", ["kb"]
        )
        self.fill = histogram(
            "citewise_search_top_k_fill_ratio", "Hits returned / top_k asked for, per search",
            ["kb"], _RATIO_BUCKETS,
        )  # fmt: skip
        self.citations = histogram(
            "citewise_answer_citations", "Citations per answer", ["model"], _COUNT_BUCKETS
        )
        self.uncited = counter(
            "citewise_answers_without_citation", "Answers that cite nothing", ["model"]
        )
        self.verified = counter(
            "citewise_answers_verified", "Answers checked by the grounding check, by result",
            ["model", "result"],
        )  # fmt: skip
        self.grounding = counter(
            "citewise_answer_grounding_findings",
            "What the grounding check found in answers: unsupported_tokens, outside_links, "
            "unsupported_citations, attributed_citations, unsupported_blocks",
            ["model", "finding"],
        )
        self.model_calls = counter(
            "citewise_model_calls", "Chat model calls by purpose and outcome",
            ["purpose", "outcome"],
        )  # fmt: skip
        self.model_seconds = histogram(
            "citewise_model_call_duration_seconds", "Duration of chat model calls", ["purpose"]
        )
        self.model_tokens = counter(
            "citewise_model_tokens", "Tokens the chat model endpoint reported (usage)",
            ["purpose", "type"],
        )  # fmt: skip

    def count_search(self, kb: str) -> None:
        """Kept for callers of the earlier ``on_search`` hook: searches are counted from
        telemetry now (every search, whichever door), so this adds nothing."""

    def observe(self, event: Event, request: RequestContext | None = None) -> None:
        """Count one telemetry event (``request``: the HTTP request it happened in)."""
        if event.kind == OPERATION:
            self._operation(event, request)
        elif event.kind == STAGE:
            within = self.name(event.within)
            self.stage_seconds.labels(within, self.name(event.name)).observe(event.seconds)
        elif event.kind == RECORD and event.name == "model_call":
            purpose = self.name(event.labels.get("purpose"))
            self.model_calls.labels(purpose, event.outcome).inc()
            self.model_seconds.labels(purpose).observe(event.seconds)
            for kind in ("prompt", "completion"):
                tokens = event.values.get(f"{kind}_tokens")
                if tokens:
                    self.model_tokens.labels(purpose, kind).inc(tokens)

    def _operation(self, event: Event, request: RequestContext | None) -> None:
        kb = self.kb(event.labels.get("kb"))
        self.operations.labels(event.name, kb, event.outcome).inc()
        self.operation_seconds.labels(event.name, kb).observe(event.seconds)
        if event.within is not None:  # a search made to answer: also a stage of the answer
            self.stage_seconds.labels(event.within, event.name).observe(event.seconds)
        if event.name == "search" and event.outcome == "ok":
            self.searches.labels(kb).inc()
            hits, top_k = event.values.get("hits", 0), event.values.get("top_k", 0)
            if hits == 0:
                self.zero_results.labels(kb).inc()
            if top_k:
                self.fill.labels(kb).observe(min(1.0, hits / top_k))
        elif event.name == "answer":
            model = self.model(event.labels.get("model"))
            if request is not None:
                request.model = model
                first = event.values.get("first_token")
                if first is not None:
                    waited = event.started + first - request.started
                    self.first_token.labels(request.route(), model).observe(max(0.0, waited))
            if event.outcome == "ok":
                citations = event.values.get("citations", 0)
                self.citations.labels(model).observe(citations)
                if citations == 0:
                    self.uncited.labels(model).inc()
                self._grounding(model, event.values)

    def _grounding(self, model: str, values: Mapping[str, float]) -> None:
        if "verified_ok" not in values:  # verify=off
            return
        self.verified.labels(model, "ok" if values["verified_ok"] else "failed").inc()
        for finding in _FINDINGS:
            if count := values.get(finding, 0):
                self.grounding.labels(model, finding).inc(count)

    def finish_request(self, request: RequestContext, method: str, status: int) -> None:
        route = request.route()
        self.requests.labels(route, method, request.model or "", str(status)).inc()
        self.latency.labels(route).observe(request.elapsed())
        if status >= 400:
            self.errors.labels(route, str(status)).inc()


class KnowledgeBaseSizes(Collector):
    """``citewise_kb_documents``, ``citewise_kb_chunks`` and ``citewise_kb_bytes`` (the
    chunks' text, UTF-8) of every knowledge base, read from the store at scrape time; the
    byte count is recomputed only when the knowledge base changed."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._bytes: dict[str, tuple[tuple[str, int], int]] = {}

    def collect(self) -> Iterator[Metric]:
        families = {
            "documents": GaugeMetricFamily(
                "citewise_kb_documents", "Documents per knowledge base", labels=["kb"]
            ),
            "chunks": GaugeMetricFamily(
                "citewise_kb_chunks", "Chunks per knowledge base", labels=["kb"]
            ),
            "bytes": GaugeMetricFamily(
                "citewise_kb_bytes", "Bytes of chunk text per knowledge base", labels=["kb"]
            ),
        }
        library = self.runtime.library
        for name in library.names():
            try:
                handle = library.open(name).store
                ids = handle.chunk_ids()
                documents = len(handle.documents())
                size = self._size(name, handle, ids)
            except Exception:  # dropped meanwhile: it is simply not there any more
                continue
            families["documents"].add_metric([name], documents)
            families["chunks"].add_metric([name], len(ids))
            families["bytes"].add_metric([name], size)
        yield from families.values()

    def _size(self, name: str, handle: Any, ids: set[str]) -> int:
        version = (handle.meta().get("indexed_at", ""), len(ids))
        cached = self._bytes.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        size = sum(len(chunk.text.encode("utf-8")) for chunk in handle.get(sorted(ids)))
        self._bytes[name] = (version, size)
        return size


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    registry = metrics.registry
    if environment().get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        # Every worker writes its samples to the directory; one scrape sums them all.
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        registry.register(request.app.state.kb_sizes)
    # Off the event loop: the knowledge-base sizes read the store.
    body = await asyncio.to_thread(generate_latest, registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
