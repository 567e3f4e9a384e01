"""A plugin installed as a package is selectable by name in every door.

The test writes a real distribution (a package plus its ``.dist-info`` with
``entry_points.txt``) to a folder on ``sys.path``, as ``pip install`` would leave it, and
selects each kind of part it registers — a reranker, a query rewrite, a workflow, an index
strategy and a chat model — by name through the Python API, ``citewise`` (the command line,
in-process and in a fresh process) and the REST and OpenAI routes (``metadata``) of a real
server on 127.0.0.1. The plugin records each call, so every assertion sees the part ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from openai import OpenAI

from citewise import registry
from citewise.cli import main
from citewise.config import Settings
from citewise.kb import IndexStrategy, KBConfig, KnowledgeBase, Library
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running

PACKAGE = "citewise_demo_plugin"
PLUGIN = '''
"""citewise parts for a test: each records its calls in CALLS."""
from citewise import Answer, Done, TextDelta
from citewise.testing import ScriptedChatModel, script

CALLS = []


class Reverse:
    """Reverses the candidates."""

    def __init__(self, model, model_dir):
        self.model = model

    async def rank(self, query, hits):
        CALLS.append(("reranker", query))
        return list(reversed(hits))


async def pelican(query, model):
    CALLS.append(("rewrite", query, model.tags if model is not None else None))
    return ["pelican"]


async def echo(turns, retriever, model, options):
    """Echoes the question, with the sections one search finds."""
    question = str(turns[-1].content)
    CALLS.append(("workflow", question))
    hits = await retriever.asearch(question, options)
    text = f"echo: {question}"
    yield TextDelta(text)
    yield Done(Answer(text=text, citations=(), hits=tuple(hits), kind="generated"))


def titles(hook, chunks):
    CALLS.append(("strategy", hook.strategy.name, len(chunks)))
    return [[chunk.text[:80] or chunk.doc_id] for chunk in chunks]


def chat(settings):
    CALLS.append(("chat_model", settings.llm_model))
    return ScriptedChatModel(reply=script(answer="The demo model answers."), tags=["demo-chat"])
'''
ENTRY_POINTS = """
[citewise.rerankers]
reverse = citewise_demo_plugin:Reverse

[citewise.query_rewrites]
pelican = citewise_demo_plugin:pelican

[citewise.workflows]
demo-echo = citewise_demo_plugin:echo

[citewise.index_strategies]
titles = citewise_demo_plugin:titles

[citewise.chat_models]
demo-chat = citewise_demo_plugin:chat
"""
DOCS = {
    "birds.md": "# Birds\n\n## Pelicans\n\nA pelican carries fish in its pouch.\n",
    "tokens.md": "# Tokens\n\n## Expiry\n\nThe API token expires after a day.\n\n"
    "## Renewal\n\nRenew the API token before it expires.\n\n"
    "## Scopes\n\nAn API token has scopes.\n",
}
CHUNKS = 6  # one per section, the pages' titles included
QUESTION = "When does the API token expire?"


def write_plugin(folder: Path) -> Path:
    """The installed form of a distribution: its package and its ``.dist-info``."""
    (folder / PACKAGE).mkdir(parents=True)
    (folder / PACKAGE / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = folder / f"{PACKAGE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.lstrip())
    return folder


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The plugin installed on ``sys.path`` for this test (the registries read it afresh)."""
    folder = write_plugin(tmp_path / "site-packages")
    monkeypatch.syspath_prepend(str(folder))
    registry.rescan()
    import citewise_demo_plugin  # type: ignore[import-not-found]

    yield citewise_demo_plugin
    monkeypatch.undo()
    sys.modules.pop(PACKAGE, None)
    registry.rescan()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with the docs indexed as ``docs`` (section) and ``titles`` (the plugin's)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    for name in ("CITEWISE_LLM_MODEL", "CITEWISE_LLM_GGUF", "CITEWISE_STORE_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def calls(plugin: ModuleType, kind: str) -> list[tuple[Any, ...]]:
    """The calls of one kind of part since the last look (taken out of the record)."""
    found = [call for call in plugin.CALLS if call[0] == kind]
    plugin.CALLS[:] = [call for call in plugin.CALLS if call[0] != kind]
    return found


def texts(hits: list[Any]) -> list[str]:
    return [hit.chunk.text if hasattr(hit, "chunk") else hit["text"] for hit in hits]


def test_the_python_api_selects_each_part_by_name(
    plugin: ModuleType, home: Path, tmp_path: Path
) -> None:
    library = Library(Settings(home=home))
    titled = library.create("titled", KBConfig(strategy=IndexStrategy("titles")))
    titled.index_folder(tmp_path / "docs")
    assert calls(plugin, "strategy") == [("strategy", "titles", CHUNKS)]
    assert KnowledgeBase("titled", settings=Settings(home=home)).config.strategy.name == "titles"

    kb = library.get("docs")
    kb.index_folder(tmp_path / "docs")
    plain = kb.search(QUESTION, top_k=3, rerank_candidates=3, search_type="full_text")
    reversed_ = kb.search(QUESTION, top_k=3, rerank_candidates=3, search_type="full_text",
                          rerank="reverse")  # fmt: skip
    assert len(plain) == 3 and texts(reversed_) == texts(plain)[::-1]
    assert calls(plugin, "reranker") == [("reranker", QUESTION)]

    # "zzz" matches nothing by itself: the rewrite's "pelican" finds the birds page.
    assert kb.search("zzz", search_type="full_text") == []
    found = kb.search("zzz", search_type="full_text", query_rewrite="pelican")
    assert ["pelican" in text for text in texts(found)] == [True]
    assert calls(plugin, "rewrite") == [("rewrite", "zzz", None)]

    echoed = kb.ask(QUESTION, workflow="demo-echo")
    assert echoed.text == f"echo: {QUESTION}" and echoed.hits
    assert calls(plugin, "workflow") == [("workflow", QUESTION)]

    written = KnowledgeBase("docs", settings=Settings(home=home, llm_model="demo-chat"))
    assert written.ask(QUESTION).text.startswith("The demo model answers.")
    assert calls(plugin, "chat_model") == [("chat_model", "demo-chat")]


def test_the_command_line_selects_each_part_by_name(
    plugin: ModuleType, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def run(*argv: str) -> str:
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    docs = [str(tmp_path / "docs" / name) for name in DOCS]
    run("kb", "create", "titled", "--strategy", "titles")
    run("doc", "add", *docs, "--kb", "titled")
    assert calls(plugin, "strategy") == [("strategy", "titles", CHUNKS)]
    run("index", str(tmp_path / "docs"), "--kb", "docs")

    search = ["search", QUESTION, "--kb", "docs", "--top-k", "3", "--rerank-candidates", "3",
              "--search-type", "full_text", "--json"]  # fmt: skip
    plain = [hit["text"] for hit in json.loads(run(*search))]
    reversed_ = [hit["text"] for hit in json.loads(run(*search, "--rerank", "reverse"))]
    assert len(plain) == 3 and reversed_ == plain[::-1]
    assert calls(plugin, "reranker") == [("reranker", QUESTION)]

    found = json.loads(run("search", "zzz", "--kb", "docs", "--search-type", "full_text",
                           "--query-rewrite", "pelican", "--json"))  # fmt: skip
    assert ["pelican" in hit["text"] for hit in found] == [True]
    assert calls(plugin, "rewrite") == [("rewrite", "zzz", None)]

    assert run("ask", QUESTION, "--kb", "docs", "--model", "demo-echo").startswith(
        f"echo: {QUESTION}"
    )
    assert calls(plugin, "workflow") == [("workflow", QUESTION)]

    monkeypatch.setenv("CITEWISE_LLM_MODEL", "demo-chat")
    assert "The demo model answers." in run("ask", QUESTION, "--kb", "docs")
    assert calls(plugin, "chat_model") == [("chat_model", "demo-chat")]


def test_a_fresh_process_finds_the_installed_plugin(plugin: ModuleType, home: Path) -> None:
    """No registration in the process: ``citewise`` reads the entry points itself."""
    folder = Path(plugin.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "citewise", "kb", "create", "titled", "--strategy", "titles"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(titles, minilm)" in done.stdout


def test_the_server_selects_each_part_by_name(
    plugin: ModuleType, home: Path, tmp_path: Path
) -> None:
    settings = Settings(home=home)
    Library(settings).get("docs").index_folder(tmp_path / "docs")
    app = create_app(settings, ServerOptions(kb="docs"))
    with running(app) as url, httpx.Client(base_url=url, timeout=120) as api:
        created = api.post("/v1/knowledge-bases", json={"name": "titled", "strategy": "titles"})
        assert created.status_code == 201, created.text
        files = [("files", (name, text.encode())) for name, text in DOCS.items()]
        assert api.post("/v1/knowledge-bases/titled/documents", files=files).status_code == 200
        assert calls(plugin, "strategy") == [("strategy", "titles", CHUNKS)]
        typo = api.post("/v1/knowledge-bases", json={"name": "t", "retrieval": {"rerank": "rev"}})
        assert typo.status_code == 400 and typo.json()["error"]["param"] == "retrieval.rerank"
        assert "unknown reranker 'rev'" in typo.text

        body = {"query": QUESTION, "top_k": 3, "rerank_candidates": 3, "search_type": "full_text"}
        plain = api.post("/v1/knowledge-bases/docs/search", json=body).json()["data"]
        reply = api.post("/v1/knowledge-bases/docs/search", json={**body, "rerank": "reverse"})
        assert texts(reply.json()["data"]) == texts(plain)[::-1] and len(plain) == 3
        assert calls(plugin, "reranker") == [("reranker", QUESTION)]
        unknown = api.post("/v1/knowledge-bases/docs/search", json={**body, "rerank": "nope"})
        assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "rerank"
        assert "(known: off, cross_encoder, llm, reverse)" in unknown.text

        with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
            cards = sdk.models.list().data
            assert [card.id for card in cards] == [
                "citewise-rag",
                "citewise-agentic",
                "citewise-agentic-tools",
                "demo-echo",
            ]
            assert cards[3].model_extra["description"] == (  # type: ignore[index]
                "Echoes the question, with the sections one search finds."
            )
            schema = cards[0].model_extra["citewise_settings"]["schema"]  # type: ignore[index]
            assert schema["properties"]["rerank"]["enum"][-1] == "reverse"
            assert schema["properties"]["query_rewrite"]["enum"][-1] == "pelican"
            answer = sdk.responses.create(model="demo-echo", input=QUESTION)
            assert answer.output_text.startswith(f"echo: {QUESTION}")
            assert calls(plugin, "workflow") == [("workflow", QUESTION)]

            # The chat model a package registers is one a client may name; the rewrite
            # (and the reranker) chosen in the metadata are the plugin's.
            chosen = {"chat_model": "demo-chat", "query_rewrite": "pelican",
                      "search_type": "full_text", "rerank": "reverse"}  # fmt: skip
            sdk.responses.create(
                model="citewise-rag", input="zzz",
                metadata={"citewise_settings": json.dumps(chosen)},
            )  # fmt: skip
            assert calls(plugin, "rewrite") == [("rewrite", "zzz", ["demo-chat"])]
            assert calls(plugin, "reranker") == [("reranker", "zzz")]
            assert calls(plugin, "chat_model") == [("chat_model", "demo-chat")]
