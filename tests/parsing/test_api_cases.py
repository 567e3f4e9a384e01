"""The dev cases over the API reference: valid case files whose expected sections all exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.evaluation.cases import load_cases
from citewise.kb import parse_folder
from citewise.sources.nav import folder_api_reference

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
CASES = {
    "requests-cases.json": SHARED_DATA / "requests-2.34.2" / "docs",
    "lgos-api-cases.json": SHARED_DATA / "lgos-docs-0.12.0" / "docs",
}
# requests is built with dirhtml by a Read the Docs project setting its source cannot show
# (Sphinx's default, what its config implies, is html): the page form is given.
PAGE_FORMS = {"requests-cases.json": "dirhtml"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_files_load_and_name_existing_sections(name: str) -> None:
    docs = CASES[name]
    if not docs.is_dir():
        pytest.skip(f"shared data not found at {docs.resolve()}")
    path = DATA / name
    cases = load_cases(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    found = parse_folder(docs, api=folder_api_reference(docs), page_form=PAGE_FORMS.get(name))
    urls = {s.url for s in found}
    pages = {url.split("#", 1)[0] for url in urls}
    kinds = {item["kind"] for item in raw}
    assert kinds <= {"api", "prose"} and (name.startswith("lgos") or kinds == {"api", "prose"})
    for case, item in zip(cases, raw, strict=True):
        assert len(item["anchors"]) == len(case.parts), case.id
        for part, anchors in zip(case.parts, item["anchors"], strict=True):
            assert set(part) <= pages, case.id
            assert set(anchors) <= urls, case.id
            # Each expected section lies on one of the part's pages.
            assert {a.split("#", 1)[0] for a in anchors} <= set(part), case.id
