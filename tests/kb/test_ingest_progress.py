"""Ingest progress counts embedding windows (the slow part), not files."""

from __future__ import annotations

from pathlib import Path

from citewise.config import Settings
from citewise.embedding.base import Embedder
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
