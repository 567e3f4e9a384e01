"""Index strategies: section windows, parent_child children and parents, qa questions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from citewise.embedding import embedding_windows
from citewise.errors import ConfigurationError, ModelError
from citewise.models import Chunk
from citewise.strategies import IndexStrategy, StrategyWindows
from citewise.testing import ScriptedCall, ScriptedChatModel
from tests.kb_support import MakeKB, sections, upload

LONG = " ".join(
    f"Paragraph {i} explains how the scheduler handles topic{i} in the cluster." for i in range(20)
)


class CharWindowed:
    """An embedder's windowing attributes only: one that cannot count tokens."""

    window_chars = 600


class TokenCounting:
    """An embedder's windowing attributes with a tokenizer: one token per word."""

    window_chars = 600
    window_tokens = 30

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(r"\S+", text)]


EMBEDDER: Any = CharWindowed()


def chunk(text: str, position: int = 0) -> Chunk:
    return Chunk(f"c{position}", "d.md", position, 0, text, "T", ("T",), "", "", "")


def test_meta_round_trip_and_defaults() -> None:
    strategy = IndexStrategy("qa", parent_chars=1500, child_chars=300, questions=5)
    assert IndexStrategy.from_meta(strategy.to_meta()) == strategy
    assert IndexStrategy.from_meta({}) == IndexStrategy()
    overlapping = IndexStrategy("section", parent_chars=180, overlap=30, overlap_unit="tokens")
    assert IndexStrategy.from_meta(overlapping.to_meta()) == overlapping


@pytest.mark.parametrize(
    "kwargs",
    [{"name": "tree"}, {"parent_chars": 99}, {"child_chars": 10}, {"questions": 0}],
)
def test_invalid_strategies_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        IndexStrategy(**kwargs)


def test_section_embeds_model_sized_windows() -> None:
    windows = StrategyWindows(IndexStrategy("section"), EMBEDDER)
    assert windows([chunk(f"T\n\n{LONG}")]) == [embedding_windows(f"T\n\n{LONG}", 600)]


def test_windows_are_cut_by_tokens_when_the_embedder_counts_them() -> None:
    embedder: Any = TokenCounting()
    [windows] = StrategyWindows(IndexStrategy("section"), embedder)([chunk(f"T\n\n{LONG}")])
    assert len(windows) > 1
    assert all(w.startswith("T\n\n") and len(w.split()) <= 30 for w in windows)
    # Together the windows hold every word, in order, with a little overlap.
    words = LONG.split()
    assert windows[0].split()[1] == words[0] and windows[-1].split()[-1] == words[-1]
    assert sum(len(w.split()) - 1 for w in windows) >= len(words)
    # Parent/child children keep the smaller character size asked for.
    children_of = StrategyWindows(IndexStrategy("parent_child", child_chars=200), embedder)
    assert all(len(child) <= 200 for child in children_of([chunk(f"T\n\n{LONG}")])[0])


def test_parent_child_embeds_small_children() -> None:
    windows = StrategyWindows(IndexStrategy("parent_child", child_chars=200), EMBEDDER)
    [children] = windows([chunk(f"T\n\n{LONG}")])
    assert len(children) > len(embedding_windows(f"T\n\n{LONG}", 600))
    assert all(len(child) <= 200 for child in children)


def test_parent_child_returns_each_parent_once_with_its_full_text(make_kb: MakeKB) -> None:
    kb = make_kb(strategy="parent_child", child_chars=200)
    kb.add_documents([upload("sched.md", sections("Scheduler", LONG)), upload("x.md", "# X\n\nA.")])
    hits = kb.search("how does the scheduler handle topic7", search_type="vector")
    parents = [h.chunk.chunk_id for h in hits]
    assert len(parents) == len(set(parents))
    best = hits[0].chunk
    assert best.doc_id == "sched.md" and "Paragraph 0" in best.text and "Paragraph 19" in best.text
    # The parent has many children, all embedded and searched; it is still one hit.
    children = StrategyWindows(IndexStrategy("parent_child", child_chars=200), EMBEDDER)([best])
    assert len(children[0]) > 3


def questions_for(call: ScriptedCall) -> dict[str, list[str]]:
    if "fail-me" in call.last:
        raise ModelError("the endpoint is down")
    if "empty-me" in call.last:
        return {"questions": []}
    return {"questions": ["How do I rotate the signing key?", "Where are keys kept?"]}


def test_qa_embeds_questions_then_the_chunk() -> None:
    model = ScriptedChatModel(reply=questions_for)
    windows = StrategyWindows(IndexStrategy("qa", questions=2), EMBEDDER, model)
    [texts] = windows([chunk("Keys\n\nThe signing key lives in the vault.")])
    assert texts == [
        "How do I rotate the signing key?",
        "Where are keys kept?",
        "Keys\n\nThe signing key lives in the vault.",
    ]
    [call] = model.calls
    assert call.kind == "ChunkQuestions" and "signing key lives in the vault" in call.last
    assert "Write 2 distinct questions" in call.last


def test_qa_reports_chunks_whose_generation_failed() -> None:
    model = ScriptedChatModel(reply=questions_for)
    windows = StrategyWindows(IndexStrategy("qa"), EMBEDDER, model)
    texts = windows([chunk("A\n\nfail-me", 0), chunk("B\n\nempty-me", 1), chunk("C\n\nfine", 2)])
    assert texts[0] == ["A\n\nfail-me"] and texts[1] == ["B\n\nempty-me"]
    assert len(texts[2]) == 3
    assert sorted(windows.failures) == [
        "d.md chunk 0: the endpoint is down",
        "d.md chunk 1: no questions",
    ]


def test_qa_needs_a_model() -> None:
    with pytest.raises(ConfigurationError, match="needs a chat model"):
        StrategyWindows(IndexStrategy("qa"), EMBEDDER, None)


def test_qa_knowledge_base_finds_a_chunk_by_its_question(make_kb: MakeKB) -> None:
    def reply(call: ScriptedCall) -> dict[str, list[str]]:
        if "vault" in call.last:
            return {"questions": ["How do I rotate the signing key?"]}
        if "fail-me" in call.last:
            raise ModelError("boom")
        return {"questions": ["What colour is the logo?"]}

    kb = make_kb(strategy="qa", model=ScriptedChatModel(reply=reply), questions=1)
    report = kb.add_documents(
        [
            upload("keys.md", "# Secrets\n\nThe material lives in the vault; replace it yearly."),
            upload("brand.md", "# Brand\n\nThe logo is teal."),
            upload("broken.md", "# Broken\n\nfail-me"),
        ]
    )
    assert report.failures == ["broken.md chunk 0: boom"]
    assert {d.doc_id for d in kb.documents()} == {"keys.md", "brand.md", "broken.md"}
    hits = kb.search("how to rotate the signing key", search_type="vector", top_k=1)
    assert hits[0].chunk.doc_id == "keys.md"
