"""Incremental, transactional indexing of a docs folder with the real default embedder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding import CachedEmbedder, EmbeddingCache, get_embedder
from citewise.embedding.base import Embedder, Vectors
from citewise.errors import EmbeddingError, KnowledgeBaseError
from citewise.kb import KnowledgeBase

SITE = "https://docs.example/"


class CountingEmbedder:
    """Wraps a real embedder, counting passages and failing on a marker word."""

    def __init__(self, inner: Embedder, fail_on: str | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.window_chars = inner.window_chars
        self.fail_on = fail_on
        self.passages = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.fail_on and any(self.fail_on in text for text in texts):
            raise RuntimeError("model crashed")
        self.passages += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm")


def write_docs(folder: Path) -> None:
    (folder / "guide").mkdir(parents=True, exist_ok=True)
    (folder / "index.md").write_text("# Home\n\nWelcome to the widget docs.\n")
    (folder / "guide" / "install.md").write_text(
        "# Install\n\nInstall the widget with pip.\n\n## Upgrade\n\nUpgrade with pip -U.\n"
    )
    (folder / "guide" / "auth.md").write_text(
        "# Authentication\n\nSet an API key header.\n\n## Rotation\n\nRotate keys monthly.\n"
    )


def make_kb(settings: Settings, embedder: Embedder) -> KnowledgeBase:
    return KnowledgeBase("widgets", settings=settings, embedder=embedder)


def test_reindex_embeds_only_what_changed_and_drops_deleted_files(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    docs = tmp_path / "docs"
    write_docs(docs)
    counting = CountingEmbedder(minilm)
    kb = make_kb(settings, counting)

    first = kb.index_folder(docs, site_url=SITE, version="1.0")
    assert sorted(first.added) == ["guide/auth.md", "guide/install.md", "index.md"]
    assert first.chunks == 5 and first.chunks_embedded == 5

    embedded_before = counting.passages
    second = kb.index_folder(docs, site_url=SITE, version="1.0")
    assert len(second.unchanged) == 3 and second.chunks_embedded == 0
    assert counting.passages == embedded_before

    (docs / "guide" / "install.md").write_text(
        "# Install\n\nInstall the widget with pip.\n\n## Upgrade\n\nUpgrade with uv instead.\n"
    )
    (docs / "guide" / "auth.md").unlink()
    third = kb.index_folder(docs, site_url=SITE, version="1.0")
    assert third.updated == ["guide/install.md"] and third.removed == ["guide/auth.md"]
    assert third.chunks_embedded == 1 and third.chunks == 3
    pages = {hit.chunk.page for hit in kb.search("rotate API keys", top_k=10)}
    assert "guide/auth/" not in pages
    assert kb.search("upgrade with uv", top_k=1)[0].url == f"{SITE}1.0/guide/install/#upgrade"


def test_failed_embedding_names_the_file_and_keeps_the_index(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    docs = tmp_path / "docs"
    write_docs(docs)
    make_kb(settings, minilm).index_folder(docs, site_url=SITE)
    kb = make_kb(settings, CountingEmbedder(minilm, fail_on="EXPLODE"))
    before = [(d.doc_id, d.content_hash) for d in kb.documents()]
    hits_before = [h.chunk.chunk_id for h in kb.search("API key header")]

    (docs / "index.md").write_text("# Home\n\nChanged welcome text.\n")
    (docs / "guide" / "auth.md").write_text("# Authentication\n\nEXPLODE\n")
    (docs / "guide" / "install.md").unlink()
    with pytest.raises(EmbeddingError, match="auth.md"):
        kb.index_folder(docs, site_url=SITE)

    assert [(d.doc_id, d.content_hash) for d in kb.documents()] == before
    assert [h.chunk.chunk_id for h in kb.search("API key header")] == hits_before


def test_other_embedder_is_refused(tmp_path: Path, settings: Settings, minilm: Embedder) -> None:
    docs = tmp_path / "docs"
    write_docs(docs)
    make_kb(settings, minilm).index_folder(docs)
    other = CountingEmbedder(minilm)
    other.model_id = "another-model"
    with pytest.raises(KnowledgeBaseError, match="--rebuild"):
        make_kb(settings, other).index_folder(docs)


def test_unknown_knowledge_base_is_a_clear_error(settings: Settings) -> None:
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base 'nope'"):
        KnowledgeBase("nope", settings=settings).search("anything")


def test_vectors_read_from_the_cache_rank_as_embedded_ones(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    # A build reads every cached window in one pass; a chunk with a window missing is
    # embedded with its batch. Either way the knowledge base ranks as one built by the model.
    docs = tmp_path / "docs"
    write_docs(docs)
    counting = CountingEmbedder(minilm)
    with EmbeddingCache(tmp_path / "cache.sqlite") as cache:
        cached = CachedEmbedder(counting, cache)
        KnowledgeBase("first", settings=settings, embedder=cached).index_folder(docs, site_url=SITE)
        embedded = counting.passages
        (docs / "extra.md").write_text("# Extra\n\nA page the cache has not seen yet.\n")
        kb = KnowledgeBase("second", settings=settings, embedder=cached)
        report = kb.index_folder(docs, site_url=SITE)
        assert report.chunks_embedded == 6 and report.windows_embedded == 6
        assert counting.passages == embedded + 1  # the new page's window alone
        third = KnowledgeBase("third", settings=settings, embedder=cached)
        assert third.index_folder(docs, site_url=SITE).windows_embedded == 6
        assert counting.passages == embedded + 1  # all read from the cache
        plain = KnowledgeBase("plain", settings=settings, embedder=minilm)
        plain.index_folder(docs, site_url=SITE)
        for query in ("rotate API keys", "upgrade with pip", "a page not seen"):
            want = [(h.chunk.chunk_id, h.score) for h in plain.search(query, top_k=10)]
            assert [(h.chunk.chunk_id, h.score) for h in kb.search(query, top_k=10)] == want
            assert [(h.chunk.chunk_id, h.score) for h in third.search(query, top_k=10)] == want
