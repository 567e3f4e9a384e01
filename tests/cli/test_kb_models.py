"""Per-knowledge-base models through the CLI, against a scripted OpenAI-compatible endpoint:
the chat model a knowledge base names writes its qa questions, query rewrites and LLM
rankings; a request may name another; without either, the global model serves; the
cross-encoder directory a knowledge base names is the one loaded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citewise.testing import OpenAIStub, StubReply

from .support import fail, run, run_json

STRUCTURED = {
    "ChunkQuestions": {"questions": ["How is the key sent?"]},
    "QueryVariants": {"queries": ["bearer token header"]},
    "Ranking": {"order": [1]},
    "HypotheticalPassage": {"passage": "Send the key in a header."},
}


def structured(body: dict[str, Any]) -> StubReply:
    name = body["tools"][0]["function"]["name"]
    return StubReply(tool_call=(name, STRUCTURED[name]))


@pytest.fixture
def endpoint(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    """A scripted endpoint whose global model (CITEWISE_LLM_MODEL) is ``global-model``."""
    with OpenAIStub(structured) as server:
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "global-model")
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        yield server


def models_asked(endpoint: OpenAIStub) -> list[tuple[str, str]]:
    """(model, structured call) of each request the endpoint received, then forgets them."""
    asked = [(body["model"], body["tools"][0]["function"]["name"]) for body in endpoint.requests]
    endpoint.requests.clear()
    return asked


def add_guide(home: Path, capsys: pytest.CaptureFixture[str], kb: str) -> None:
    guide = home / "guide.md"
    guide.write_text(
        "# Guide\n\n## Keys\n\nSend the API key as a bearer token.\n\n"
        "## Logs\n\nLogs go to stderr.\n"
    )
    run(capsys, "doc", "add", str(guide), "--kb", kb)


def test_a_knowledge_bases_chat_model_serves_its_qa_rewrites_and_rankings(
    home: Path, endpoint: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    created = run_json(
        capsys, "kb", "create", "team", "--strategy", "qa", "--chat-model", "kb-model", "--json"
    )
    assert created["chat_model"] == "kb-model"
    assert "chat_model         kb-model" in run(capsys, "kb", "show", "team")
    add_guide(home, capsys, "team")
    asked = models_asked(endpoint)  # one call per chunk
    assert len(asked) >= 2 and set(asked) == {("kb-model", "ChunkQuestions")}
    search = ["kb", "search", "team", "API key", "--json", "--query-rewrite", "multi_query"]
    run_json(capsys, *search, "--rerank", "llm")
    assert models_asked(endpoint) == [("kb-model", "QueryVariants"), ("kb-model", "Ranking")]
    # A request names another model for itself only.
    run_json(capsys, *search, "--chat-model", "request-model")
    assert models_asked(endpoint) == [("request-model", "QueryVariants")]
    run_json(capsys, *search)
    assert models_asked(endpoint) == [("kb-model", "QueryVariants")]


def test_without_a_model_of_its_own_the_global_model_serves(
    home: Path, endpoint: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    created = run_json(capsys, "kb", "create", "plain", "--json")
    assert created["chat_model"] is None and created["reranker_dir"] is None
    add_guide(home, capsys, "plain")
    run_json(capsys, "kb", "search", "plain", "API key", "--json", "--query-rewrite", "hyde")
    assert models_asked(endpoint) == [("global-model", "HypotheticalPassage")]


def test_a_knowledge_bases_cross_encoder_directory_is_the_one_loaded(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_RERANKER_DIR", str(home / "global-reranker"))
    own = home / "kb-reranker"
    own.mkdir()
    (own / "tokenizer.json").write_text("{}")
    run(capsys, "kb", "create", "team", "--reranker-dir", str(own))
    add_guide(home, capsys, "team")
    error = fail(capsys, "kb", "search", "team", "API key", "--rerank", "cross_encoder")
    assert f"cross-encoder directory {own} lacks model.onnx" in error
    other = home / "other-reranker"
    error = fail(
        capsys, "kb", "search", "team", "API key", "--rerank", "cross_encoder",
        "--reranker-dir", str(other),
    )  # fmt: skip
    assert f"cross-encoder directory {other} lacks model.onnx, tokenizer.json" in error
