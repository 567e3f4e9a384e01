"""Catalog cards: what each knowledge base is, read from its meta and its first page."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import Library
from citewise.kb.catalog import card_of, normalized

from .libraries import three_libraries


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    return three_libraries(tmp_path_factory.mktemp("catalog"))


def test_a_card_names_package_version_scopes_and_aliases(library: Library) -> None:
    lgos = card_of(library.open("lgos"))
    assert (lgos.package, lgos.version, lgos.label) == (
        "langgraph-openai-serve", "0.12.0", "langgraph-openai-serve 0.12.0"
    )  # fmt: skip
    assert lgos.aliases == ("lgos", "langgraph-openai-serve")
    assert lgos.scopes[0] == "all"
    # A Read the Docs site names the project in its host and the version in its path.
    requests = card_of(library.open("requests"))
    assert (requests.package, requests.version) == ("requests", "2.34.2")


def test_a_card_without_description_opens_with_the_first_page(library: Library) -> None:
    handbook = card_of(library.open("handbook"))
    assert (handbook.package, handbook.version) == ("handbook", "")
    assert handbook.description.startswith("Every employee has 25 days of paid holiday")
    assert handbook.as_json()["kb"] == "handbook"


def test_names_compare_in_any_spelling() -> None:
    assert normalized("LangGraph_OpenAI Serve") == normalized("langgraph-openai-serve")
    assert normalized(" requests ") == "requests"


def test_a_release_name_gives_package_and_version(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "index.md").write_text("# Widgets\n\nWidgets spin things up quickly and well.\n")
    library = Library(Settings(home=tmp_path / "home"))
    library.get("widgets-1.4.2").index_folder(folder)
    card = card_of(library.open("widgets-1.4.2"))
    assert (card.package, card.version) == ("widgets", "1.4.2")
    assert card.aliases == ("widgets-1.4.2", "widgets")
