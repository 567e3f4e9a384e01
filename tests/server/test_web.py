"""The chat page in headless Chromium (Debian's chromium, driven by node + playwright-core):
rendered Markdown, citations placed right around emoji, errors, stop, reloads, file links."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script
from tests.kb_support import MakeKB, sections, upload

from .conftest import ENDLESS_WORDS, FAIL, RICH, TRICKY, EndlessModel, cite_first

WEB_TESTS = Path(__file__).resolve().parents[1] / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
QUESTION = "How do I add API key authentication?"
SLOW = "SLOW"


def browser_or_skip() -> str:
    """Node, or a skip naming what is missing; run before a browser test's fixtures (see
    ``pytest_runtest_setup`` in conftest), so a missing browser costs no indexing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the chat page's browser test needs node")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set CHROMIUM)")
    if not (WEB_TESTS / "node_modules" / "playwright-core").is_dir():
        pytest.skip(f"playwright-core is not installed: run npm ci in {WEB_TESTS}")
    return node


def drive(*args: str) -> dict[str, Any]:
    """Run ``chat.mjs`` with ``args``; what the page showed."""
    node = browser_or_skip()
    run = subprocess.run(
        [node, "chat.mjs", *args],
        cwd=WEB_TESTS,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CHROMIUM": CHROMIUM},
    )
    assert run.returncode == 0, run.stderr
    seen: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["pageErrors"] == []
    return seen


def test_the_page_and_its_libraries_serve_without_a_build_step(scripted_url: str) -> None:
    page = httpx.get(scripted_url)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for script_name in ("marked.umd.js", "purify.min.js", "render.js", "app.js"):
        assert f'<script src="/web/{script_name}">' in page.text
        script_file = httpx.get(f"{scripted_url}/web/{script_name}")
        assert script_file.status_code == 200
        assert script_file.headers["content-type"].startswith("text/javascript")
    assert "/v1/responses" in httpx.get(f"{scripted_url}/web/app.js").text
    assert httpx.get(f"{scripted_url}/web/../app.py").status_code == 404


@pytest.fixture
def slow_model() -> EndlessModel:
    return EndlessModel(reply=script(answer=cite_first), endless_when=SLOW)


@pytest.fixture
def page_url(lgos_home: Path, slow_model: EndlessModel) -> Iterator[str]:
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: slow_model
    )
    with running(app) as url:
        yield url


@pytest.mark.browser
def test_a_conversation_in_the_page(
    page_url: str, slow_model: EndlessModel, lgos_scopes: tuple[str, ...], tmp_path: Path
) -> None:
    # Kept as artifacts: CITEWISE_ARTIFACTS names a folder to keep the screenshots in.
    shots = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    rich = f"{RICH}: {QUESTION}"
    seen = drive("scripted", page_url, str(shots), rich, f"{FAIL} {QUESTION}", f"{SLOW} {QUESTION}")

    assert seen["scopes"] == list(lgos_scopes)  # the scope selector comes from the schema
    assert seen["models"] == ["citewise-rag", "citewise-agentic", "citewise-agentic-tools"]
    assert seen["examples"] and all(e.endswith("?") for e in seen["examples"])
    assert seen["firstStatus"] == "Understanding the question"
    assert seen["statuses"] == [
        "Understanding the question",
        f"Searching the docs: {rich}",
        "Writing the answer",
    ]
    # Rendered Markdown: code in <pre><code> with a copy button, a table, no literal **.
    answer = seen["answer"]
    assert answer["pre"] == 1 and answer["copyButtons"] == 1 and answer["tables"] == 1
    # The code block, which the model left uncited, keeps its shape; the citation citewise
    # attributed to it follows it as a number of its own (the table's words are in no
    # section, so it stays uncited).
    assert [a["after"] for a in answer["attributed"]] == ["code"]
    assert all(a["href"].startswith("https://") and a["number"] for a in answer["attributed"])
    assert "**" not in answer["text"] and "<strong>middleware</strong>" in answer["html"]
    # Both citations link the section's title, right where the Markdown link was, though
    # emoji (two UTF-16 units each) come before them; both are source [1].
    first, second = answer["citations"]
    assert first["href"].startswith("https://ilkersigirci.github.io/langgraph-openai-serve/")
    assert second["href"] == first["href"] and first["text"] == second["text"]
    assert first["text"] and "](" not in first["text"]
    assert first["number"] == second["number"] == "1" and first["target"] == "_blank"
    assert answer["text"].startswith(f"{TRICKY} Use the middleware described in {first['text']}")
    assert second["before"].endswith("🚀🚀 (")
    assert seen["sources"] == [first["href"]]
    assert first["text"] in seen["card"]  # the hover card: heading path and snippet
    assert seen["opened"] == {"url": first["href"], "heading": "docs page"}

    # A failure shows in its turn, leaves no status spinning and keeps the question.
    assert "scripted outage" in seen["error"] and seen["failedStatuses"] == 0
    assert seen["keptQuestion"] == f"{FAIL} {QUESTION}"

    # Stop cancels the answer on the server: the model is asked for nothing more.
    assert slow_model.stopped.wait(timeout=30), "the model kept streaming after Stop"
    assert len(slow_model.produced) < ENDLESS_WORDS
    assert seen["stoppedQuestion"] == f"{SLOW} {QUESTION}" and seen["turns"] == 3

    # A reload keeps the conversation; "New chat" clears it.
    assert seen["afterReload"]["turns"] == 3 and not seen["afterReload"]["empty"]
    assert seen["afterReload"]["answer"] == answer["text"]
    assert "scripted outage" in seen["afterReload"]["error"]
    assert seen["narrowOverflow"] <= 0  # nothing wider than a 390 px phone
    assert seen["afterNewChat"] == {"turns": 0, "empty": True, "stored": "[]"}
    for name in ("web-chat-desktop.png", "web-chat-card.png", "web-chat-390.png"):
        assert (shots / name).stat().st_size > 10_000


@pytest.mark.browser
def test_an_extractive_answer_renders_as_markdown(extractive_url: str, tmp_path: Path) -> None:
    shots = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    seen = drive("extractive", extractive_url, QUESTION, str(shots))
    assert (shots / "web-chat-extractive.png").stat().st_size > 10_000
    answer = seen["answer"]
    assert answer["blockquotes"] >= 1 and "**" not in answer["text"]
    assert not any(line.startswith(">") for line in answer["text"].splitlines())
    assert ":material-" not in answer["text"] and "{ ." not in answer["text"]
    assert answer["citations"] and all(c["text"] for c in answer["citations"])
    assert all(c["href"].startswith("https://") for c in answer["citations"])
    assert seen["sources"] == list(dict.fromkeys(c["href"] for c in answer["citations"]))
    # The hover card reads the section's Markdown through the page's renderer: the syntax
    # goes, the identifiers keep their underscores.
    assert seen["card"] and "**" not in seen["card"]
    assert seen["snippet"] == (
        "Return HTTP_401_UNAUTHORIZED (see API_KEYS, once). if key not in API_KEYS: raise"
    )


HANDBOOK = sections(
    "Leave policy",
    "Annual leave is 25 days a year. 🌴",
    "Sick leave needs a doctor's note after three days.",
)


@pytest.fixture
def files_url(make_kb: MakeKB, tmp_path: Path) -> Iterator[str]:
    """A server with no chat model over a knowledge base of uploaded files."""
    make_kb("files").add_documents([upload("hr/leave-policy.md", HANDBOOK)])
    app = create_app(
        Settings(home=tmp_path / "home"), ServerOptions(kb="files"), model_factory=lambda: None
    )
    with running(app) as url:
        yield url


@pytest.mark.browser
def test_a_file_citation_opens_the_document(files_url: str) -> None:
    seen = drive("files", files_url, "How many days of annual leave?")
    content = f"{files_url}/v1/knowledge-bases/files/documents/hr/leave-policy.md/content"
    assert seen["answer"]["citations"][0]["href"].startswith(f"{content}#")
    opened = seen["opened"]
    assert opened["url"].startswith(content) and opened["status"] == 200
    # A browser gets the page rendered, its headings carrying the sections' anchors.
    assert opened["contentType"] == "text/html; charset=utf-8"
    assert "Annual leave is 25 days a year. 🌴" in opened["text"]
    assert opened["target"] == "Part 1"  # the cited section, found by the link's #anchor


@pytest.fixture
def quick_start_url(tmp_path: Path) -> Iterator[str]:
    """The README's quick start: citewise's own docs/, indexed with no site URL."""
    settings = Settings(home=tmp_path / "home")
    from citewise.kb import KnowledgeBase

    KnowledgeBase("citewise", settings=settings).index_folder(Path(__file__).parents[2] / "docs")
    app = create_app(settings, ServerOptions(kb="citewise"), model_factory=lambda: None)
    with running(app) as url:
        yield url


@pytest.mark.browser
def test_a_quick_start_citation_lands_on_its_rendered_section(quick_start_url: str) -> None:
    seen = drive("files", quick_start_url, "How does citewise split long sections?")
    opened = seen["opened"]
    assert opened["status"] == 200 and opened["contentType"] == "text/html; charset=utf-8"
    assert "#" in opened["url"] and opened["target"], opened  # the anchor exists in the page
    cited = seen["answer"]["citations"][0]
    assert cited["href"].split("#")[1] == opened["url"].split("#")[1]


@pytest.fixture
def keyed_url(lgos_home: Path) -> Iterator[str]:
    options = ServerOptions(kb="lgos", api_keys=frozenset({"sk-right"}))
    app = create_app(Settings(home=lgos_home), options, model_factory=lambda: None)
    with running(app) as url:
        yield url


@pytest.mark.browser
def test_a_key_is_kept_only_once_it_worked(keyed_url: str) -> None:
    seen = drive("keys", keyed_url, QUESTION, "sk-wrong", "sk-right")
    assert "API key" in seen["asked"]
    assert seen["wrong"]["error"].startswith("401") and seen["wrong"]["stored"] is None
    assert seen["wrong"]["question"] == QUESTION  # ready to send again with the right key
    assert seen["right"]["citations"] > 0 and seen["right"]["stored"] == "sk-right"


@pytest.mark.browser
def test_the_bm25_toggle_switches_the_search_to_embeddings_only(extractive_url: str) -> None:
    seen = drive("bm25", extractive_url, QUESTION)
    assert seen["checkedAtFirst"] is True  # the default search (hybrid) uses BM25
    first, second = seen["sent"]
    assert "citewise_settings" not in first  # nothing differs from the defaults
    assert json.loads(second["citewise_settings"]) == {"search_type": "vector"}
    assert seen["answer"]["citations"]


UNSUPPORTED = "The canteen serves a free lunch to every employee on Fridays."


@pytest.fixture
def unsupported_url(make_kb: MakeKB, tmp_path: Path) -> Iterator[str]:
    """A scripted model that answers with one block a section supports and one it does not."""
    make_kb("files").add_documents([upload("hr/leave-policy.md", HANDBOOK)])
    model = script(answer=f"Annual leave is 25 days a year.\n\n{UNSUPPORTED}")
    app = create_app(
        Settings(home=tmp_path / "home"),
        ServerOptions(kb="files"),
        model_factory=lambda: ScriptedChatModel(reply=model),
    )
    with running(app) as url:
        yield url


@pytest.mark.browser
def test_a_block_no_section_supports_is_marked_as_such(
    unsupported_url: str, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    seen = drive("unsupported", unsupported_url, "How many days of annual leave?", str(shots))

    # Only the unsupported paragraph is marked, with a visible label and a tooltip.
    assert seen["blocks"] == 2
    assert [m["text"] for m in seen["marked"]] == [UNSUPPORTED]
    (marked,) = seen["marked"]
    assert marked["tag"] == "p" and "grounding check" in marked["title"]
    assert "Not supported by the sources" in marked["label"]
    assert seen["afterReload"] == seen["marked"]  # kept with the stored conversation
