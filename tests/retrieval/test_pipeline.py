"""The retrieval options end to end on a small MiniLM knowledge base: each option changes what
comes back, and the knowledge base's defaults apply under request overrides."""

from __future__ import annotations

from typing import Any

import pytest

from citewise.errors import ConfigurationError
from citewise.kb import KnowledgeBase
from citewise.options import SearchOptions
from citewise.retrieval.expand import expand_hits, joined_text
from citewise.testing import ScriptedCall, ScriptedChatModel
from tests.kb_support import MakeKB, sections, upload

FILES = [
    ("auth.md", sections("Authentication", "Send the API key as a bearer token.")),
    ("deploy.md", sections("Deployment", "Run the container behind a reverse proxy.")),
    ("logs.md", sections("Logging", "Every request logs a request id.")),
    (
        "tuning.md",
        sections(
            "Tuning",
            "The worker pool size defaults to four.",
            "Raise the pool size when requests queue up.",
            "The cache keeps one hour of results.",
            "Lower the cache lifetime for fast-changing data.",
        ),
    ),
]


def reply(call: ScriptedCall) -> Any:
    if call.kind == "QueryVariants":
        return {"queries": ["reverse proxy container"]}
    if call.kind == "Ranking":
        # Put the passage about logging first, whatever the first stage said.
        numbers = [line.split("]")[0][1:] for line in call.last.splitlines() if line[:1] == "["]
        by_text = dict(zip(numbers, call.last.split("\n[")[0:], strict=False))
        logging_first = [int(n) for n in numbers if "request id" in by_text.get(n, "")]
        return {"order": logging_first}
    raise AssertionError(call.kind)


@pytest.fixture
def kb(make_kb: MakeKB) -> KnowledgeBase:
    knowledge = make_kb(model=ScriptedChatModel(reply=reply))
    knowledge.add_documents([upload(name, text) for name, text in FILES])
    return knowledge


def doc_ids(hits: list[Any]) -> list[str]:
    return [h.chunk.doc_id for h in hits]


def test_top_k_and_search_types(kb: KnowledgeBase) -> None:
    for search_type in ("vector", "full_text", "hybrid"):
        hits = kb.search("bearer token API key", top_k=2, search_type=search_type)
        assert len(hits) <= 2 and hits[0].chunk.doc_id == "auth.md"
    keyword = kb.search("bearer", search_type="full_text")
    assert {r for h in keyword for r in h.rankers} == {"keyword"}


def test_metadata_filter_doc_ids(kb: KnowledgeBase) -> None:
    hits = kb.search("bearer token API key", doc_ids=["logs.md"])
    assert set(doc_ids(hits)) == {"logs.md"}


def test_multi_query_fuses_the_rewrites_results(kb: KnowledgeBase) -> None:
    plain = kb.search("zzz unrelated words", search_type="full_text")
    assert plain == []
    fused = kb.search(
        "zzz unrelated words", {"search_type": "full_text", "query_rewrite": "multi_query"}
    )
    assert fused[0].chunk.doc_id == "deploy.md"


def test_llm_rerank_reorders(kb: KnowledgeBase) -> None:
    first = kb.search("bearer token API key", top_k=3)
    assert first[0].chunk.doc_id == "auth.md"
    reranked = kb.search("bearer token API key", top_k=3, rerank="llm")
    assert reranked[0].chunk.doc_id == "logs.md"


def test_cross_encoder_without_a_directory_fails_before_searching(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEWISE_RERANKER_DIR", raising=False)
    with pytest.raises(ConfigurationError, match="CITEWISE_RERANKER_DIR"):
        kb.search("anything", rerank="cross_encoder")


def test_llm_options_without_a_model_are_clear_errors(make_kb: MakeKB) -> None:
    bare = make_kb("bare")
    bare.add_documents([upload("a.md", FILES[0][1])])
    with pytest.raises(ConfigurationError, match="rerank=llm needs a chat model"):
        bare.search("bearer", rerank="llm")


def test_context_window_appends_neighbours_of_the_same_section(kb: KnowledgeBase) -> None:
    [hit] = kb.search("pool size defaults to four", top_k=1, search_type="full_text")
    assert hit.chunk.text.count("Tuning") == 1
    [wide] = kb.search(
        "pool size defaults to four", {"top_k": 1, "search_type": "full_text", "context_window": 1}
    )
    assert wide.chunk.chunk_id == hit.chunk.chunk_id
    # Parts are sections of their own, so the window does not cross into Part 2.
    assert wide.chunk.text == hit.chunk.text


def test_expand_joins_chunks_of_one_section(kb: KnowledgeBase, make_kb: MakeKB) -> None:
    long = make_kb("long", parent_chars=200)
    body = "\n\n".join(f"Sentence number {i} about the pool size and queue." for i in range(12))
    long.add_documents([upload("t.md", f"# Pool\n\n{body}\n\n# Other\n\nUnrelated text.")])
    hits = long.search("Sentence number 5", search_type="full_text", top_k=1)
    [wide] = expand_hits(long.store, hits, 1)
    assert wide.chunk.text.startswith("Pool\n\n") and wide.chunk.text.count("Pool\n\n") == 1
    assert len(wide.chunk.text) > len(hits[0].chunk.text)
    assert "Unrelated" not in wide.chunk.text
    assert expand_hits(long.store, hits, 0) == hits


def test_context_scope_page_adds_the_adjacent_sections_of_the_page(make_kb: MakeKB) -> None:
    kb = make_kb("pages")
    page_a = "# Pool\n\nThe pool size defaults to four.\n\n# Queue\n\nThe queue holds ten."
    kb.add_documents([upload("a.md", page_a), upload("b.md", "# Elsewhere\n\nAnother page.")])
    query = {"top_k": 1, "search_type": "full_text", "context_window": 1}
    [section] = kb.search("pool size defaults to four", query)
    [page] = kb.search("pool size defaults to four", {**query, "context_scope": "page"})
    assert "queue holds ten" not in section.chunk.text
    assert page.chunk.chunk_id == section.chunk.chunk_id
    # The next section of the same page joins, with its own heading line; no other page does.
    assert "Queue\n\nThe queue holds ten." in page.chunk.text
    assert "Another page" not in page.chunk.text
    with pytest.raises(ConfigurationError, match="context_scope"):
        kb.search("pool", context_scope="site")


def test_joined_text_keeps_the_heading_once() -> None:
    from dataclasses import replace

    from tests.fakes import INSTALL

    other = replace(INSTALL.chunk, text="Guide > Install\n\nThen run it.")
    assert joined_text([INSTALL.chunk, other]) == (
        "Guide > Install\n\nInstall it with `pip install example`.\n\nThen run it."
    )


def test_knowledge_base_defaults_apply(make_kb: MakeKB) -> None:
    kb = make_kb("defaults", defaults=SearchOptions(top_k=1, search_type="full_text"))
    kb.add_documents([upload(name, text) for name, text in FILES])
    hits = kb.search("request id")
    assert len(hits) == 1 and hits[0].rankers == ("keyword",)
    assert len(kb.search("request id", top_k=3)) > 1
    # Keyword overrides apply over the options given, which apply over the defaults.
    assert len(kb.search("request id", SearchOptions(top_k=3), top_k=2)) == 2
    assert len(kb.search("request id", {"top_k": 3})) > 1
