"""``GET /metrics`` after real requests: a CLI ingest, extractive and scripted-model answers, a
failing model, uploads, searches; parsed as Prometheus text, with bounded label sets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import OpenAIStub, ScriptedChatModel, StubReply, script

from .conftest import FAIL, cite_first, cli_indexed_home, client

QUESTION = "How do I rotate the signing key?"
DOCS = {
    "keys.md": "# Signing keys\n\n## Rotation\n\nRotate the signing key with `acme keys rotate`."
    " The old key stays valid for one day.\n",
    "deploy.md": "# Deploy\n\n## Containers\n\nBuild the image, then run `acme serve` behind a "
    "reverse proxy.\n",
}
# Every label a citewise series may carry: none holds free text from a request.
LABELS = {"route", "method", "model", "status", "type", "operation", "kb", "outcome", "stage",
          "purpose", "le", "result", "finding"}  # fmt: skip


@dataclass
class Scrape:
    """One ``/metrics`` response, parsed: samples by name as (labels, value)."""

    text: str

    def __post_init__(self) -> None:
        self.samples: dict[str, list[tuple[dict[str, str], float]]] = {}
        for family in text_string_to_metric_families(self.text):
            for sample in family.samples:
                self.samples.setdefault(sample.name, []).append((sample.labels, sample.value))

    def value(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels``."""
        return sum(
            value
            for found, value in self.samples.get(name, [])
            if all(found.get(key) == wanted for key, wanted in labels.items())
        )

    def citewise(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        return {name: s for name, s in self.samples.items() if name.startswith("citewise_")}


def scrape(url: str) -> Scrape:
    response = httpx.get(f"{url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response.text)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose knowledge base ``notes`` was made by ``citewise index`` (the CLI)."""
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    return cli_indexed_home(tmp_path, DOCS, "--site-url", "https://acme.dev/")


@pytest.fixture
def scripted_url(home: Path) -> Iterator[str]:
    model = ScriptedChatModel(reply=script(answer=cite_first))
    app = create_app(Settings(home=home), ServerOptions(kb="notes"), model_factory=lambda: model)
    with running(app) as url:
        yield url


def test_requests_stages_answers_and_failures_move_the_metrics(
    home: Path, scripted_url: str
) -> None:
    before = scrape(scripted_url)
    assert before.value("citewise_kb_documents", kb="notes") == 2  # the CLI's ingest
    assert before.value("citewise_kb_chunks", kb="notes") >= 2
    assert before.value("citewise_kb_bytes", kb="notes") > 100

    with client(scripted_url) as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
        list(sdk.responses.create(model="citewise-rag", input=QUESTION, stream=True))
        failed = list(sdk.responses.create(model="citewise-rag", input=f"{FAIL} x", stream=True))
        assert failed[-1].type == "response.failed"
        with pytest.raises(openai.APIStatusError) as refused:
            sdk.responses.create(model="citewise-rag", input=f"{FAIL} x")
        assert refused.value.status_code == 502
        sdk.chat.completions.create(
            model="citewise-rag", messages=[{"role": "user", "content": "hello there"}]
        )
    search = f"{scripted_url}/v1/knowledge-bases/notes/search"
    assert httpx.post(search, json={"query": "zzzz qqqq", "search_type": "full_text"}).is_success
    assert httpx.post(search, json={"query": "signing key", "top_k": 50}).is_success
    after = scrape(scripted_url)

    responses = {"route": "/v1/responses", "model": "citewise-rag"}
    assert after.value("citewise_requests_total", **responses, status="200") == 3
    assert after.value("citewise_requests_total", **responses, status="502") == 1
    assert after.value("citewise_request_duration_seconds_count", route="/v1/responses") == 4
    assert after.value("citewise_errors_total", route="/v1/responses", type="502") == 1
    assert after.value("citewise_errors_total", route="/v1/responses", type="ModelError") == 1
    # Both successful answers streamed a first token; the failures never did.
    assert after.value("citewise_time_to_first_token_seconds_count", **responses) == 2

    answers = {"operation": "answer", "kb": "notes"}
    assert after.value("citewise_operations_total", **answers, outcome="ok") == 3
    assert after.value("citewise_operations_total", **answers, outcome="error") == 2
    for stage in ("plan", "search", "generate"):
        count = after.value("citewise_stage_duration_seconds_count", operation="answer",
                            stage=stage)  # fmt: skip
        assert count >= 3, stage
    for stage in ("embed_query", "dense", "keyword", "fuse"):
        assert after.value("citewise_stage_duration_seconds_count", operation="search",
                           stage=stage) >= 4  # fmt: skip

    assert after.value("citewise_searches_total", kb="notes") == 7  # 5 answers, 2 searches
    assert after.value("citewise_search_zero_results_total", kb="notes") == 1
    fill = after.samples["citewise_search_top_k_fill_ratio_bucket"]
    assert after.value("citewise_search_top_k_fill_ratio_count", kb="notes") == 7
    assert any(labels["le"] == "0.1" and value >= 2 for labels, value in fill)  # 0/10, 2/50

    # Three answers cite a section: the two questions, and "hello there" (the plan searches
    # every message as written, so the scripted answer cites what it found).
    assert after.value("citewise_answer_citations_count", model="citewise-rag") == 3
    assert after.value("citewise_answer_citations_sum", model="citewise-rag") == 3
    assert after.value("citewise_answers_without_citation_total", model="citewise-rag") == 0
    # Every answer went through the grounding check. The scripted answer's "use the
    # middleware, then restart" is not what the notes about signing keys say: its citation
    # is counted as unsupported.
    verified = {"model": "citewise-rag"}
    ok = after.value("citewise_answers_verified_total", **verified, result="ok")
    assert ok + after.value("citewise_answers_verified_total", **verified, result="failed") == 3
    assert after.value("citewise_answer_grounding_findings_total", **verified,
                       finding="unsupported_citations") == 3 - ok >= 1  # fmt: skip
    assert after.value("citewise_model_calls_total", purpose="answer", outcome="ok") == 3
    assert after.value("citewise_model_calls_total", purpose="answer", outcome="error") == 2
    check_bounded(after)


def test_uploads_deletes_and_failed_ingests_are_counted(scripted_url: str) -> None:
    documents = f"{scripted_url}/v1/knowledge-bases/notes/documents"
    upload = httpx.post(documents, files={"files": ("faq.md", b"# FAQ\n\n## Keys\n\nRotate.\n")})
    assert upload.is_success, upload.text
    bad = httpx.post(documents, files={"files": ("broken.docx", b"not a docx at all")})
    assert bad.status_code == 400
    assert httpx.delete(f"{documents}/faq.md").json()["deleted"] is True
    after = scrape(scripted_url)
    assert after.value("citewise_operations_total", operation="ingest", outcome="ok") == 1
    assert after.value("citewise_operations_total", operation="ingest", outcome="error") == 1
    assert after.value("citewise_operations_total", operation="delete", outcome="ok") == 1
    for stage in ("parse", "chunk", "embed", "store"):
        assert after.value("citewise_stage_duration_seconds_count", operation="ingest",
                           stage=stage) >= 1, stage  # fmt: skip
    assert after.value("citewise_kb_documents", kb="notes") == 2
    check_bounded(after)


def test_model_calls_count_the_endpoints_tokens(home: Path) -> None:
    def reply(body: dict[str, Any]) -> StubReply:
        if body.get("tools"):  # the plan, by tool calling
            name = body["tools"][0]["function"]["name"]
            return StubReply(tool_call=(name, {"needs_docs": True, "queries": [QUESTION]}))
        return StubReply("Rotate it with acme keys rotate.")

    with OpenAIStub(reply) as stub:
        settings = Settings(home=home, llm_base_url=stub.base_url, llm_model="stub-model")
        with running(create_app(settings, ServerOptions(kb="notes"))) as url:
            with client(url) as sdk:
                sdk.responses.create(model="citewise-rag", input=QUESTION)
            after = scrape(url)
    assert after.value("citewise_model_calls_total", purpose="plan", outcome="ok") == 1
    assert after.value("citewise_model_tokens_total", purpose="plan", type="prompt") >= 1
    assert after.value("citewise_model_tokens_total", purpose="plan", type="completion") >= 1
    assert after.value("citewise_model_call_duration_seconds_count", purpose="answer") == 1


def check_bounded(scrape: Scrape) -> None:
    """Only the known labels, no request text in any value, and few series."""
    series = scrape.citewise()
    for name, samples in series.items():
        for labels, _ in samples:
            assert set(labels) <= LABELS, (name, labels)
            text = json.dumps(labels)
            assert "rotate" not in text.lower() and "zzzz" not in text and FAIL not in text
    assert sum(len(samples) for samples in series.values()) < 1500


def test_metrics_export_no_created_series(tmp_path: Path) -> None:
    app = create_app(Settings(home=tmp_path / "home"), ServerOptions(), model_factory=lambda: None)
    with running(app) as url:
        assert httpx.get(f"{url}/v1/models", timeout=30).status_code == 200
        exported = httpx.get(f"{url}/metrics", timeout=30).text
    assert "citewise_requests_total{" in exported
    assert "_created" not in exported
