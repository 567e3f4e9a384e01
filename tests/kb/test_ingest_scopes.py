"""Scopes when indexing a folder: from the site nav when there is one, else top-level folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding import get_embedder
from citewise.embedding.base import Embedder
from citewise.errors import ConfigurationError
from citewise.kb import KnowledgeBase, parse_folder
from citewise.sources.nav import ScopeRule
from tests.sources.conftest import widget_docs


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm")


def write_site(root: Path, *, with_nav: bool = True) -> Path:
    for name, data in widget_docs("1.0.0").items():
        if name.startswith("docs/") or (with_nav and name == "mkdocs.yml"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    return root / "docs"


def scopes_by_page(kb: KnowledgeBase) -> dict[str, str]:
    return {doc.doc_id: doc.scope for doc in kb.documents()}


def test_folder_scopes_follow_the_nav_and_filter_search(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    docs = write_site(tmp_path)
    kb = KnowledgeBase("widgets", settings=settings, embedder=minilm)
    kb.index_folder(docs, scope_rule=ScopeRule(separate=("Examples",)))
    assert scopes_by_page(kb) == {
        "examples/cache.md": "examples",
        "examples/index.md": "examples",
        "guide/index.md": "guide library",
        "guide/install.md": "guide library",
        "index.md": "library",
    }
    assert kb.scopes == ("all", "examples", "guide", "library")
    library = kb.search("caching proxy widgets", top_k=10, scope="library")
    assert library and not any(hit.chunk.page.startswith("examples/") for hit in library)
    examples = kb.search("caching proxy widgets", top_k=10, scope="examples")
    assert examples and all(hit.chunk.page.startswith("examples/") for hit in examples)
    assert len(kb.search("caching proxy widgets", top_k=10, scope="all")) == 5


def test_a_changed_scope_rule_rewrites_scopes_without_embedding(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    docs = write_site(tmp_path)
    kb = KnowledgeBase("widgets", settings=settings, embedder=minilm)
    kb.index_folder(docs)
    assert scopes_by_page(kb)["examples/cache.md"] == "examples library"
    report = kb.index_folder(docs, scope_rule=ScopeRule(separate=("examples",)))
    assert sorted(report.updated) == ["examples/cache.md", "examples/index.md"]
    assert report.chunks_embedded == 0
    assert scopes_by_page(kb)["examples/cache.md"] == "examples"
    hits = kb.search("caching proxy", top_k=10, scope="library")
    assert not any(hit.chunk.page.startswith("examples/") for hit in hits)


def test_without_a_nav_the_top_level_folder_is_the_scope(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    docs = write_site(tmp_path, with_nav=False)
    kb = KnowledgeBase("widgets", settings=settings, embedder=minilm)
    kb.index_folder(docs)
    assert scopes_by_page(kb)["guide/install.md"] == "guide"
    assert scopes_by_page(kb)["index.md"] == ""
    with pytest.raises(ConfigurationError, match="need a site navigation"):
        kb.index_folder(docs, scope_rule=ScopeRule(separate=("guide",)))


def test_an_unknown_scope_is_refused_with_the_known_ones(
    tmp_path: Path, settings: Settings, minilm: Embedder
) -> None:
    kb = KnowledgeBase("widgets", settings=settings, embedder=minilm)
    kb.index_folder(write_site(tmp_path))
    with pytest.raises(ConfigurationError, match="unknown scope 'guides'.*all, examples, guide"):
        kb.search("install", scope="guides")


def test_sections_carry_their_nav_scopes(tmp_path: Path) -> None:
    sections = parse_folder(write_site(tmp_path), site_url="https://widgets.example/")
    by_page = {section.doc_id: section.scope for section in sections}
    assert by_page["examples/cache.md"] == "examples library"
    assert by_page["index.md"] == "library"
