"""Optional OpenTelemetry traces (``citewise[otel]``): a span per request, per graph node and
per pipeline stage, exported with OTLP.

Tracing is on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
is set, the OpenTelemetry SDK's own variables configure the exporter, and ``OTEL_SERVICE_NAME``
names the service (default ``citewise``). Tests pass a tracer provider of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from citewise.config import environment
from citewise.errors import MissingExtraError
from citewise.telemetry import Event

__all__ = ["Traces", "traces_from_env"]

_ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class Traces:
    """A :mod:`citewise.telemetry` observer that opens a span around every block."""

    def __init__(self, provider: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError as error:  # pragma: no cover - the api comes with the extra
            raise MissingExtraError("opentelemetry-sdk", "otel", "Tracing") from error
        self.provider = provider or trace.get_tracer_provider()
        self.tracer = self.provider.get_tracer("citewise")

    def observe(self, event: Event) -> None:
        """Spans carry the events already (the telemetry seam wraps each block in one)."""

    def span(self, name: str, labels: Mapping[str, str]) -> AbstractContextManager[None]:
        return self._span(name, labels)

    @contextmanager
    def _span(self, name: str, labels: Mapping[str, str]) -> Iterator[None]:
        attributes = {f"citewise.{key}": value for key, value in labels.items()}
        with self.tracer.start_as_current_span(f"citewise.{name}", attributes=attributes):
            yield


def traces_from_env(environ: Mapping[str, str] | None = None) -> Traces | None:
    """OTLP traces when an OTLP endpoint is configured, else None.

    Raises:
        MissingExtraError: an endpoint is set but ``citewise[otel]`` is not installed.
    """
    env = environment() if environ is None else environ
    if not any(env.get(name) for name in _ENDPOINT_ENVS):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise MissingExtraError("opentelemetry-sdk", "otel", "OTLP tracing") from error
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "citewise"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return Traces(provider)
