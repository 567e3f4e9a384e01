"""citewise's workflows served by the real langgraph-openai-serve app on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip(
    "langgraph_openai_serve",
    reason="langgraph-openai-serve is not installed (pip install 'citewise[lgos]')",
)

from citewise.config import Settings  # noqa: E402
from citewise.integrations import lgos  # noqa: E402
from citewise.kb import KnowledgeBase, Library  # noqa: E402
from citewise.server.testing import running  # noqa: E402
from citewise.testing import ScriptedChatModel, script  # noqa: E402
from tests import conftest as tests_conftest  # noqa: E402
from tests.integrations.conftest import KB, cite_first  # noqa: E402

QUESTION = "How do I add API key authentication?"


@pytest.fixture
def model() -> ScriptedChatModel:
    return ScriptedChatModel(reply=script(answer=cite_first))


@pytest.fixture
def served(docs_home: Path, model: ScriptedChatModel) -> Iterator[str]:
    library = Library(Settings(home=docs_home))
    kb = KnowledgeBase(KB, library=library, model=model)
    with running(lgos.create_app(kb)) as url:
        yield url


def settings(**values: Any) -> dict[str, str]:
    return {"lgos_settings": json.dumps(values)}


def chat(url: str, *, stream: bool = False, **values: Any) -> httpx.Response:
    body = {
        "model": "citewise-rag",
        "messages": [{"role": "user", "content": QUESTION}],
        "metadata": settings(**values),
        "stream": stream,
    }
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60)


def sse(response: httpx.Response) -> list[dict[str, Any]]:
    lines = (line.removeprefix("data: ") for line in response.text.splitlines())
    return [json.loads(line) for line in lines if line.startswith("{")]


def test_models_advertise_scope_and_bm25_from_the_knowledge_base(served: str) -> None:
    models = httpx.get(f"{served}/v1/models", timeout=10).json()
    assert {m["id"] for m in models["data"]} == {"citewise-rag", "citewise-agentic"}
    detail = httpx.get(f"{served}/v1/models/citewise-rag", timeout=10).json()
    contract = detail["lgos"]["client_settings"]
    fields = contract["json_schema"]["properties"]
    assert fields["scope"]["title"] == "Docs scope"
    assert set(fields["scope"]["enum"]) == {"all", "how-to-guides", "tutorials"}
    assert fields["bm25"]["title"] == "BM25 keyword search"
    assert contract["defaults"] == {"scope": "all", "bm25": True}


def test_chat_completion_keeps_url_citations_inside_the_chosen_scope(
    served: str, model: ScriptedChatModel
) -> None:
    response = chat(served, scope="how-to-guides")
    assert response.status_code == 200, response.text
    message = response.json()["choices"][0]["message"]
    text = message["content"]
    [annotation] = message["annotations"]
    cited = annotation["url_citation"]
    assert "/how-to-guides/authentication/" in cited["url"]
    # LGOS's spans are inclusive: the cited text is the whole Markdown link.
    span = text[cited["start_index"] : cited["end_index"] + 1]
    assert span.startswith("[") and span.endswith(f"({cited['url']})")
    prompt = next(call for call in model.calls if call.kind == "answer").messages[-1].text
    assert "/tutorials/" not in prompt  # the scope reached citewise's search


def test_streamed_chat_text_matches_the_answer_and_ends_with_annotations(served: str) -> None:
    response = chat(served, stream=True)
    assert response.status_code == 200, response.text
    chunks = sse(response)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) > 3
    final = next(c for c in chunks if c["choices"] and c["choices"][0].get("finish_reason"))
    [annotation] = final["choices"][0]["delta"]["annotations"]
    cited = annotation["url_citation"]
    assert text[cited["start_index"] : cited["end_index"] + 1].endswith(f"({cited['url']})")


def test_responses_stream_statuses_as_commentary_and_annotations(served: str) -> None:
    body = {
        "model": "citewise-agentic",
        "input": QUESTION,
        "metadata": settings(scope="how-to-guides", bm25=False),
        "stream": True,
    }
    response = httpx.post(f"{served}/v1/responses", json=body, timeout=60)
    assert response.status_code == 200, response.text
    events = sse(response)
    kinds = [event["type"] for event in events]
    assert "response.output_text.annotation.added" in kinds
    done = next(e for e in events if e["type"] == "response.completed")["response"]
    phases = {item.get("phase"): item for item in done["output"] if item["type"] == "message"}
    commentary = [
        part["text"]
        for item in done["output"]
        if item["type"] == "message" and item.get("phase") == "commentary"
        for part in item["content"]
    ]
    assert f"Searching the how-to-guides docs: {QUESTION}" in commentary
    [part] = phases["final_answer"]["content"]
    [annotation] = part["annotations"]
    assert annotation["type"] == "url_citation"
    assert "/how-to-guides/" in annotation["url"]


def test_an_unknown_scope_is_a_400_naming_the_setting(served: str) -> None:
    response = chat(served, scope="nope")
    assert response.status_code == 400
    assert "scope" in response.json()["error"]["message"]


def test_bm25_off_searches_by_embeddings_only(docs_home: Path) -> None:
    kb = KnowledgeBase(KB, library=Library(Settings(home=docs_home)))
    chosen = lgos.settings_model(kb)(scope="tutorials", bm25=False)
    assert lgos.search_overrides(kb, chosen) == {"scope": "tutorials", "search_type": "vector"}
    on = lgos.search_overrides(kb, lgos.settings_model(kb)())
    assert on == {"scope": "all", "search_type": "hybrid"}


@pytest.mark.parametrize("verify", ["warn", "regenerate"])
def test_streamed_text_is_citewise_final_text_under_warn_and_regenerate(
    tmp_path: Path, verify: str
) -> None:
    """A warning appended by the check streams too; a held-back first answer never does."""
    from citewise.kb import KBConfig
    from citewise.options import SearchOptions

    def unsupported(call: Any) -> str:
        return cite_first(call) + " Set `CITEWISE_NO_SUCH_SETTING=1` first."

    model = ScriptedChatModel(reply=script(answer=unsupported))
    config = KBConfig(defaults=SearchOptions(verify=verify))
    kb = KnowledgeBase.create("strict", config, settings=Settings(home=tmp_path), model=model)
    page = (tests_conftest.LGOS / "docs" / "how-to-guides" / "authentication.md").read_bytes()
    kb.add_upload([("authentication.md", page)])
    with running(lgos.create_app(kb)) as url:
        response = chat(url, stream=True)
        final = chat(url).json()["choices"][0]["message"]["content"]
    assert response.status_code == 200, response.text
    chunks = sse(response)
    assert not any("error" in chunk for chunk in chunks), chunks
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == final
    answers = [call for call in model.calls if call.kind == "answer"]
    if verify == "warn":
        assert len(text) > len(unsupported(answers[0]))  # the warning came after the answer
    else:
        assert len(answers) == 4  # each request: the first answer, then its one regeneration
        assert text.count("CITEWISE_NO_SUCH_SETTING") <= 1  # the first answer was held back


def test_the_app_module_serves_the_knowledge_base_named_by_the_environment(
    docs_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``uvicorn citewise.integrations.lgos:app`` (no chat model: the extractive answer)."""
    monkeypatch.setenv("CITEWISE_HOME", str(docs_home))
    monkeypatch.setenv(lgos.KB_ENV, KB)
    for name in ("CITEWISE_LLM_BASE_URL", "CITEWISE_LLM_MODEL", "CITEWISE_LLM_GGUF"):
        monkeypatch.delenv(name, raising=False)
    with running(lgos.app) as url:
        response = chat(url, scope="how-to-guides")
    assert response.status_code == 200, response.text
    [first, *_] = response.json()["choices"][0]["message"]["annotations"]
    assert "/how-to-guides/" in first["url_citation"]["url"]
