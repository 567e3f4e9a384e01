"""Ingest progress counts embedding windows (the slow part), not files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from citewise.config import Settings
from citewise.embedding.base import Embedder, Vectors
from citewise.kb import KnowledgeBase


def test_progress_counts_windows_up_to_the_windows_embedded(
    tmp_path: Path, minilm: Embedder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    long = "\n\n".join(f"Paragraph {k} about installing widgets on servers." * 6 for k in range(8))
    (docs / "long.md").write_text(f"# Long\n\n## Part\n\n{long}\n", encoding="utf-8")
    (docs / "short.md").write_text("# Short\n\n## Part\n\nOne line.\n", encoding="utf-8")
    calls: list[tuple[int, int, str]] = []
    kb = KnowledgeBase("progress", settings=Settings(home=tmp_path / "home"), embedder=minilm)
    report = kb.index_folder(docs, progress=lambda d, t, doc: calls.append((d, t, doc)))
    assert calls, "no progress reported"
    done, total, _ = calls[-1]
    assert done == total == report.windows_embedded
    assert total > report.files  # windows, not files
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)

    calls.clear()
    kb.index_folder(docs, progress=lambda d, t, doc: calls.append((d, t, doc)))
    assert calls == []  # nothing to embed, nothing to report


class _CountingSpans:
    """The real embedder, counting how often each text is tokenized whole to cut windows."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.window_tokens: int = inner.window_tokens  # type: ignore[attr-defined]
        self.window_chars: int = inner.window_chars  # type: ignore[attr-defined]
        self.cut: dict[str, int] = {}

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        self.cut[text] = self.cut.get(text, 0) + 1
        return self.inner.token_spans(text)  # type: ignore[attr-defined,no-any-return]

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


def test_each_chunk_is_cut_into_windows_once(tmp_path: Path, minilm: Embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    long = "\n\n".join(f"Paragraph {k} about installing widgets on servers." * 6 for k in range(8))
    (docs / "long.md").write_text(f"# Long\n\n## Part\n\n{long}\n", encoding="utf-8")
    counting = _CountingSpans(minilm)
    kb = KnowledgeBase("once", settings=Settings(home=tmp_path / "home"), embedder=counting)  # type: ignore[arg-type]
    report = kb.index_folder(docs, progress=lambda d, t, doc: None)
    assert report.windows_embedded > 1
    long_texts = [t for t in counting.cut if len(t) > 1000]
    assert long_texts, "no chunk was long enough to cut"
    assert all(counting.cut[t] == 1 for t in long_texts), counting.cut
