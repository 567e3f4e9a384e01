"""Every door gives the same hits for the same question and options.

One knowledge base with its own search defaults (not the global ones) and one without are
searched through Python, ``citewise search``, ``citewise ask --json``, the REST search,
``/v1/responses`` (extractive, and with a scripted model) and MCP ``search_docs``: the hits
(chunk, URL, score, rankers and text, context window included) must be identical, with the
SQLite store and with the PostgreSQL one.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.kb import IndexStrategy, KBConfig, KnowledgeBase, Library, SearchOptions
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from . import pg
from .conftest import REPO

QUESTION = "How does citewise split long sections?"
SITE = "https://citewise.example/"
# A knowledge base whose defaults differ from the built-in ones on every axis a door could
# silently drop: fewer hits, BM25 only, and a context window that widens the text.
CUSTOM = SearchOptions(top_k=3, search_type="full_text", context_window=1)

# (knowledge base, overrides): the defaults alone, then per-request options over them.
CASES = [
    ("custom", {}),
    ("custom", {"top_k": 5, "search_type": "hybrid"}),
    ("plain", {}),
    ("plain", {"top_k": 2, "search_type": "vector", "doc_ids": ["how-it-works.md"]}),
    # Issue 34's options: fewer candidates per ranker, a window over adjacent sections.
    ("custom", {"search_type": "hybrid", "candidates_per_ranker": 3, "context_scope": "page"}),
]
Hit = dict[str, Any]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The store every door uses: the default SQLite folder, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield None
        return
    url = pg.fresh_url()
    yield url
    pg.drop_schema(url)


def use_store(monkeypatch: pytest.MonkeyPatch, store_url: str | None) -> None:
    if store_url:
        monkeypatch.setenv("CITEWISE_STORE_URL", store_url)
    else:
        monkeypatch.delenv("CITEWISE_STORE_URL", raising=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, store_url: str | None) -> Path:
    """citewise's own docs, indexed twice: ``custom`` (own defaults) and ``plain``."""
    home = tmp_path_factory.mktemp("doors")
    library = Library(Settings(home=home, store_url=store_url))
    # Small chunks, so a section spans several and the context window has neighbours to add.
    strategy = IndexStrategy("section", parent_chars=500)
    library.create("custom", KBConfig(strategy=strategy, embedder="minilm", defaults=CUSTOM))
    for name in ("custom", "plain"):
        library.get(name).index_folder(REPO / "docs", site_url=SITE)
    library.close()
    return home


@pytest.fixture(scope="module")
def servers(home: Path, store_url: str | None) -> Iterator[dict[str, str]]:
    """Two real servers on 127.0.0.1: extractive, and with a scripted model that plans the
    question as written (so its one search is the same search)."""
    settings = Settings(home=home, store_url=store_url)
    scripted = ScriptedChatModel(reply=script(answer="See the docs."))
    extractive_app = create_app(settings, ServerOptions(kb="plain"), model_factory=lambda: None)
    scripted_app = create_app(settings, ServerOptions(kb="plain"), model_factory=lambda: scripted)
    with running(extractive_app) as extractive, running(scripted_app) as written:
        yield {"extractive": extractive, "scripted": written}


def flags(overrides: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in overrides.items():
        for one in value if isinstance(value, list) else [value]:
            flag = "--doc-id" if key == "doc_ids" else f"--{key.replace('_', '-')}"
            out += [flag, str(one)]
    return out


def same(hit: Hit) -> tuple[Any, ...]:
    """What must agree: the chunk, where it is published, its score, rankers and text."""
    return (hit["chunk_id"], hit["url"], round(hit["score"], 6), hit["rankers"], hit["text"])


def from_result(result: Hit) -> Hit:
    """A ``file_search_call`` result as a hit."""
    attributes = result["attributes"]
    return {
        "chunk_id": result["file_id"],
        "url": result["filename"],
        "score": result["score"],
        "rankers": attributes["rankers"].split(),
        "text": result["text"],
    }


def python_door(home: Path, kb: str, overrides: dict[str, Any]) -> list[Hit]:
    settings = Settings(home=home, store_url=os.environ.get("CITEWISE_STORE_URL"))
    found = KnowledgeBase(kb, settings=settings).search(QUESTION, **overrides)
    return [hit.as_json() for hit in found]


def cli_door(
    home: Path, command: str, kb: str, overrides: dict[str, Any], capsys: Any
) -> list[Hit]:
    capsys.readouterr()
    assert main([command, QUESTION, "--kb", kb, "--json", *flags(overrides)]) == 0
    printed = json.loads(capsys.readouterr().out)
    return list(printed["hits"] if command == "ask" else printed)


def rest_door(url: str, kb: str, overrides: dict[str, Any]) -> list[Hit]:
    reply = httpx.post(
        f"{url}/v1/knowledge-bases/{kb}/search", json={"query": QUESTION, **overrides}, timeout=60
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json()["data"])


def responses_door(url: str, kb: str, overrides: dict[str, Any]) -> list[Hit]:
    from openai import OpenAI

    settings = json.dumps({"kb": kb, **overrides})
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60) as client:
        response = client.responses.create(
            model="citewise-rag",
            input=QUESTION,
            metadata={"citewise_settings": settings},
            include=["file_search_call.results"],
        )
    [search] = [item for item in response.output if item.type == "file_search_call"]
    assert search.queries == [QUESTION]
    return [from_result(result.model_dump()) for result in search.results or []]


def mcp_door(home: Path, kb: str, overrides: dict[str, Any]) -> list[Hit]:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def call() -> Any:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "citewise", "mcp", "--kb", kb],
            env={**os.environ, "CITEWISE_HOME": str(home)},
        )
        # The real stderr: pytest's captured one has no file descriptor for the subprocess.
        errlog = sys.__stderr__
        assert errlog is not None
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("search_docs", {"query": QUESTION, **overrides})

    result = asyncio.run(call())
    assert not result.is_error, result.content
    return list(result.structured_content["results"])  # the text is a short listing


@pytest.mark.parametrize(("kb", "overrides"), CASES)
def test_every_door_gives_the_same_hits(
    kb: str,
    overrides: dict[str, Any],
    home: Path,
    servers: dict[str, str],
    store_url: str | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    for variable in ("CITEWISE_LLM_MODEL", "CITEWISE_LLM_GGUF"):
        monkeypatch.delenv(variable, raising=False)
    use_store(monkeypatch, store_url)
    reference = python_door(home, kb, overrides)
    assert reference, "the question must find something for the comparison to mean anything"
    doors = {
        "citewise search": cli_door(home, "search", kb, overrides, capsys),
        "citewise ask --json": cli_door(home, "ask", kb, overrides, capsys),
        "REST search": rest_door(servers["extractive"], kb, overrides),
        "/v1/responses (extractive)": responses_door(servers["extractive"], kb, overrides),
        "/v1/responses (scripted model)": responses_door(servers["scripted"], kb, overrides),
        "MCP search_docs": mcp_door(home, kb, overrides),
    }
    expected = [same(hit) for hit in reference]
    for door, hits in doors.items():
        assert [same(hit) for hit in hits] == expected, door


def test_a_knowledge_base_s_own_defaults_shape_the_hits(
    home: Path, store_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above is not vacuous: ``custom`` differs from ``plain`` as configured."""
    use_store(monkeypatch, store_url)
    custom = python_door(home, "custom", {})
    plain = python_door(home, "plain", {})
    assert len(custom) == 3 and len(plain) == 10
    assert {tuple(hit["rankers"]) for hit in custom} == {("keyword",)}
    narrow = python_door(home, "custom", {"context_window": 0})
    assert [hit["chunk_id"] for hit in narrow] == [hit["chunk_id"] for hit in custom]
    assert any(len(c["text"]) > len(n["text"]) for c, n in zip(custom, narrow, strict=True))


def test_candidates_per_ranker_and_context_scope_change_the_hits(
    home: Path, store_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue-34 case above is not vacuous either: each option changes what comes back."""
    use_store(monkeypatch, store_url)
    hybrid = {"search_type": "hybrid", "top_k": 3}
    few = python_door(home, "custom", {**hybrid, "candidates_per_ranker": 3})
    default = python_door(home, "custom", hybrid)
    assert [same(hit) for hit in few] != [same(hit) for hit in default]
    page = python_door(home, "custom", {**hybrid, "context_scope": "page"})
    assert [hit["chunk_id"] for hit in page] == [hit["chunk_id"] for hit in default]
    assert any(len(p["text"]) > len(d["text"]) for p, d in zip(page, default, strict=True))
