"""The LGOS question cases in tests/data: well formed, varied, and every page they name exists."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from citewise.evaluation.cases import load_cases
from citewise.kb import KnowledgeBase

from ..conftest import LGOS, require

CASES = Path(__file__).resolve().parents[1] / "data" / "lgos-cases.json"
SEARCH_INDEX = LGOS / "_site_gh-pages" / "0.12.0-search.json"


def named_pages() -> dict[str, set[str]]:
    """Every page a case names (its parts, and the pages outside a missed scope) → case ids."""
    pages: dict[str, set[str]] = {}
    for raw in json.loads(CASES.read_text(encoding="utf-8")):
        for part in raw.get("parts", []) + raw.get("outside_scope", []):
            for page in part:
                pages.setdefault(page, set()).add(raw["id"])
    return pages


def test_the_cases_load_and_cover_every_kind_of_message() -> None:
    cases = load_cases(CASES)
    assert len(cases) >= 50
    kinds = Counter(raw["kind"] for raw in json.loads(CASES.read_text(encoding="utf-8")))
    for kind in ("exact-name", "user-wording", "multi-part", "follow-up", "small-talk",
                 "vague", "unrelated", "scope-miss", "non-english"):  # fmt: skip
        assert kinds[kind] >= 1, kind
    by_id = {case.id: case for case in cases}
    assert all(len(by_id[i].messages) > 1 for i in by_id if i.startswith("follow-"))
    assert all(len(by_id[i].parts) > 1 for i in by_id if i.startswith("multi-"))
    assert all(
        by_id[i].reply == "scope_hint" and by_id[i].scope
        for i in by_id
        if i.startswith("scope-") and by_id[i].parts == ()
    )


def test_every_named_page_is_indexed_and_published(lgos_kb: KnowledgeBase) -> None:
    indexed = {document.page for document in lgos_kb.documents()}
    published = {
        item["location"].split("#", 1)[0]
        for item in json.loads(require(SEARCH_INDEX).read_text(encoding="utf-8"))["items"]
    }
    named = named_pages()
    assert {page: ids for page, ids in named.items() if page not in indexed} == {}
    assert {page: ids for page, ids in named.items() if page not in published} == {}


def test_every_scope_named_is_one_of_the_kb(lgos_kb: KnowledgeBase) -> None:
    scopes = {str(case.settings.get("scope", "all")) for case in load_cases(CASES)}
    assert scopes - set(lgos_kb.scopes) == set()
