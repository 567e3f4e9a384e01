"""`citewise serve --release` against a local HTTP server serving a release archive: a
greeting builds nothing, ``--separate-scope`` (or ``CITEWISE_RELEASE_SEPARATE_SCOPES``)
shapes the scopes as for ``citewise index``, and ``/v1/models`` lists them once indexed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from citewise.cli import build_parser
from citewise.cli.serve import server_options
from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.server import create_app
from citewise.server.testing import running
from citewise.testing import ScriptedCall, ScriptedChatModel, script
from tests.sources.conftest import LocalSite, versions_json, widget_archive

from .conftest import client

ARCHIVE = "/widgets/widgets/archive/refs/tags/v2.0.0.tar.gz"
GREETING = "Hello!"


def plan(call: ScriptedCall) -> dict[str, Any]:
    if call.last == GREETING:
        return {"needs_docs": False, "queries": []}
    return {"needs_docs": True, "queries": [call.last]}


@pytest.fixture
def site() -> Iterator[LocalSite]:
    server = LocalSite()
    server.files["/versions.json"] = versions_json(("2.0.0", ["latest"]))
    server.files[ARCHIVE] = widget_archive("2.0.0")
    yield server
    server.stop()


@contextmanager
def serve(
    site: LocalSite, home: Path, *flags: str, env: dict[str, str] | None = None
) -> Iterator[OpenAI]:
    """The app ``citewise serve --release widgets/widgets@2.0.0 FLAGS`` would run."""
    args = build_parser().parse_args(
        ["serve", "--release", "widgets/widgets@2.0.0", "--site-url", "https://widgets.example/",
         "--versions-url", site.url("/versions.json"), "--archive-url", site.base
         + "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz", *flags]
    )  # fmt: skip
    model = ScriptedChatModel(reply=script(plan=plan, answer="Hi! Ask me about widgets."))
    app = create_app(
        Settings(home=home), server_options(args, env or {}), model_factory=lambda: model
    )
    with running(app) as url, client(url) as sdk:
        yield sdk


def scopes(sdk: OpenAI) -> list[str]:
    card = sdk.models.list().data[0]
    enum: list[str] = (card.model_extra or {})["citewise_settings"]["schema"]["properties"][
        "scope"
    ]["enum"]
    return enum


def ask(sdk: OpenAI, text: str) -> str:
    response = sdk.responses.create(model="citewise-rag", input=text)
    return response.output_text


def library_hit(home: Path, query: str) -> str:
    kb = KnowledgeBase("widgets-2.0.0", settings=Settings(home=home))
    # Served text first: its vectors may still be computed in the background (a keyword
    # search alone may find nothing in "library"). Completing them waits for that fill.
    kb.complete_vectors()
    (hit,) = kb.search(query, top_k=1, scope="library")
    return hit.url


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (("--separate-scope", "examples"), {}),
        ((), {"CITEWISE_RELEASE_SEPARATE_SCOPES": "examples"}),
    ],
)
def test_a_greeting_builds_nothing_and_the_scopes_follow_the_separate_scope(
    site: LocalSite, tmp_path: Path, flags: tuple[str, ...], env: dict[str, str]
) -> None:
    with serve(site, tmp_path / "home", *flags, env=env) as sdk:
        assert scopes(sdk) == ["all"]  # nothing indexed yet, nothing fetched to list it
        assert ask(sdk, GREETING) == "Hi! Ask me about widgets."
        assert site.requests == []  # the plan needed no docs: no fetch, no index
        ask(sdk, "How do I install widgets?")
        assert site.requests == ["/versions.json", ARCHIVE]
        # Indexed now: the release's own scopes, listed by the model cards.
        assert scopes(sdk) == ["all", "examples", "guide", "library"]
        card = sdk.models.list().data[0]
        assert (card.model_extra or {})["citewise_settings"]["defaults"]["kb"] == "widgets-2.0.0"
    # "examples" is kept out of "library": its cache page is not found there.
    assert "/examples/" not in library_hit(tmp_path / "home", "caching proxy")


def test_without_a_separate_scope_every_section_is_in_the_library(
    site: LocalSite, tmp_path: Path
) -> None:
    with serve(site, tmp_path / "home") as sdk:
        ask(sdk, "How do I install widgets?")
    assert "/examples/cache/" in library_hit(tmp_path / "home", "caching proxy")
