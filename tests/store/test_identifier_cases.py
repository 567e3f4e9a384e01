"""The identifier lookup cases: valid case files whose expected sections exist and hold the name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citewise.evaluation.cases import load_cases
from citewise.kb import parse_folder
from citewise.sources.nav import folder_api_reference
from citewise.store.identifiers import document_identifiers, query_identifiers
from tests.conftest import SHARED_DATA

DATA = Path(__file__).resolve().parents[1] / "data"
CASES = {
    "lgos-identifier-cases.json": SHARED_DATA / "lgos-docs-0.12.0" / "docs",
    "requests-identifier-cases.json": SHARED_DATA / "requests-2.34.2" / "docs",
}
KINDS = {"env", "flag", "dotted", "config", "function"}
FORMS = {"bare", "question", "partial"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_expected_section_exists_and_holds_the_identifier(name: str) -> None:
    docs = CASES[name]
    if not docs.is_dir():
        pytest.skip(f"shared data not found at {docs.resolve()}")
    path = DATA / name
    cases = load_cases(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    # Read the Docs builds requests with dirhtml by a project setting, not its source.
    form = "dirhtml" if name.startswith("requests") else None
    api = folder_api_reference(docs)
    sections = {s.url: s for s in parse_folder(docs, api=api, page_form=form)}
    assert len(cases) >= 20
    for case, item in zip(cases, raw, strict=True):
        assert item["kind"] in KINDS and item["form"] in FORMS, case.id
        (anchors,) = item["anchors"]
        (pages,) = case.parts
        assert set(anchors) <= sections.keys(), case.id
        assert {a.split("#", 1)[0] for a in anchors} == set(pages), case.id
        # Written from the docs: each answering section holds what the question names,
        # as an identifier term (or its last name: r.status_code, Response.status_code) or,
        # for a plain word such as NETRC, as a word.
        wanted = query_identifiers(case.question)
        if not wanted:
            wanted = re.findall(r"\b[A-Z][A-Z0-9]{2,}\b", case.question)
        assert wanted, case.id
        name = max(wanted, key=len)
        for anchor in anchors:
            section = sections[anchor]
            held = set(document_identifiers(section.text, section.anchor))
            held |= set(re.findall(r"[A-Z][A-Z0-9]{2,}", section.text))
            held |= {word.lower() for word in re.findall(r"\w+", section.text)}
            assert {name, name.upper(), name.rsplit(".", 1)[-1]} & held, (case.id, anchor)


def test_the_sets_hold_forty_cases_of_every_form() -> None:
    items = [item for name in CASES for item in json.loads((DATA / name).read_text())]
    assert len(items) >= 40
    assert {item["form"] for item in items} == FORMS
    assert {item["kind"] for item in items} == KINDS
