"""OpenTelemetry traces: a span per request, per graph node and per pipeline stage, nested."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from citewise.config import Settings
from citewise.errors import MissingExtraError
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.server.tracing import traces_from_env
from citewise.testing import ScriptedChatModel, script

from .conftest import FAIL, cite_first, client

QUESTION = "How do I add API key authentication?"


def test_an_answer_is_traced_from_request_to_stages(lgos_home: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedChatModel(reply=script(answer=cite_first))
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"),
        model_factory=lambda: model, tracer_provider=provider,
    )  # fmt: skip
    with running(app) as url, client(url) as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
        failed = list(sdk.responses.create(model="citewise-rag", input=FAIL, stream=True))
    assert failed[-1].type == "response.failed"
    spans = exporter.get_finished_spans()
    by_id = {span.context.span_id: span for span in spans}

    def path(span: ReadableSpan) -> list[str]:
        names = [span.name]
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return names[::-1]

    paths = {" > ".join(path(span)) for span in spans}
    request = "citewise.request > citewise.answer"
    for stage in ("plan", "generate", "search > citewise.dense", "search > citewise.keyword",
                  "search > citewise.embed_query", "search > citewise.fuse"):  # fmt: skip
        assert f"{request} > citewise.{stage}" in paths, stage
    answers = [span for span in spans if span.name == "citewise.answer"]
    assert len(answers) == 2 and answers[0].attributes == {
        "citewise.kb": "lgos", "citewise.model": "citewise-rag",
    }  # fmt: skip
    failed_answer = answers[1]
    assert failed_answer.status.status_code.name == "ERROR"
    assert "scripted outage" in (failed_answer.status.description or "")
    assert len({span.context.trace_id for span in spans}) == 2  # one trace per request


def test_otlp_traces_are_off_without_an_endpoint() -> None:
    assert traces_from_env({}) is None
    traces = traces_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert traces is not None
    traces.provider.shutdown()


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(MissingExtraError, match=r"citewise\[otel\]"):
        traces_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
