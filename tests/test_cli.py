"""The command line end to end on the LGOS release: JSON shapes, answers, scopes and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.cli import main

from .conftest import LGOS, LGOS_SITE, LGOS_VERSION, require

BASE = f"{LGOS_SITE}{LGOS_VERSION}/"


@pytest.fixture
def lgos_env(lgos_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    return lgos_home


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_search_json_has_the_documented_fields_best_first(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = run_json(capsys, "search", "How do I put LGOS behind LiteLLM?", "--kb", "lgos", "--json")
    assert isinstance(hits, list) and len(hits) == 10
    assert set(hits[0]) >= {"url", "page", "heading_path", "score", "text", "rankers"}
    assert hits[0]["page"] == "how-to-guides/openai-proxies/"
    assert hits[0]["url"].startswith(BASE + "how-to-guides/openai-proxies/")
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(set(hit["rankers"]) <= {"dense", "keyword"} and hit["rankers"] for hit in hits)


@pytest.mark.parametrize("mode", ["vector", "keyword"])
def test_single_ranker_modes(lgos_env: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    hits = run_json(
        capsys,
        "search",
        "API key authentication",
        "--kb",
        "lgos",
        "--mode",
        mode,
        "-k",
        "3",
        "--json",
    )
    assert isinstance(hits, list) and len(hits) == 3
    expected = "dense" if mode == "vector" else "keyword"
    assert all(hit["rankers"] == [expected] for hit in hits)


def test_scope_filters_the_search(lgos_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hits = run_json(capsys, "search", "settings", "--kb", "lgos", "--scope", "demo", "--json")
    assert isinstance(hits, list) and hits
    assert all(hit["page"].startswith("demo/") for hit in hits)


def test_ask_quotes_and_cites_sections(lgos_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "How do I add API key authentication?", "--kb", "lgos"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("*Extractive answer")
    assert "Sources:" in out
    assert BASE + "how-to-guides/authentication/" in out


def test_ask_json_annotations_point_at_their_links(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = run_json(
        capsys, "ask", "How do I add API key authentication?", "--kb", "lgos", "--json"
    )
    assert isinstance(answer, dict) and answer["annotations"]
    for note in answer["annotations"]:
        span = answer["text"][note["start_index"] : note["end_index"]]
        assert span.endswith(f"({note['url']})") and note["type"] == "url_citation"


def test_sections_json_lists_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    docs = require(LGOS / "docs")
    assert (
        main(["sections", str(docs), "--site-url", LGOS_SITE, "--version", LGOS_VERSION, "--json"])
        == 0
    )
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 133
    assert {"url", "heading_path", "page"} <= set(records[0])
    by_url = {record["url"]: record for record in records}
    assert by_url[BASE]["page"] == "" and by_url[BASE]["heading_path"] == ["LangGraph OpenAI Serve"]
    install = by_url[BASE + "getting-started/#install"]
    assert install["heading_path"] == ["Get Started With The Package", "Install"]


def test_dev_cases_are_all_found_in_the_top_ten(lgos_kb: object) -> None:
    from citewise.knowledge import KnowledgeBase

    assert isinstance(lgos_kb, KnowledgeBase)
    cases = json.loads(require(LGOS.parent / "lgos-dev-cases.json").read_text())
    for case in cases:
        question = case["messages"][-1]["content"]
        pages = [hit.chunk.page for hit in lgos_kb.search(question, k=10)]
        for part in case["parts"]:
            assert set(part) & set(pages), (case["id"], part, pages)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "x", "--kb", "missing"], "unknown knowledge base 'missing'"),
        (["index", "/nonexistent/docs", "--kb", "lgos"], "folder not found"),
    ],
)
def test_errors_are_one_line_without_traceback(
    lgos_env: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content", [b"# Broken\n\x00\x00", b"# Caf\xe9\n"])
def test_bad_file_leaves_the_stored_index_intact(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA page about caching.\n")
    assert main(["index", str(docs), "--kb", "small", "-q"]) == 0
    (docs / "bad.md").write_bytes(content)
    (docs / "good.md").unlink()
    capsys.readouterr()
    assert main(["index", str(docs), "--kb", "small", "-q"]) == 1
    assert "bad.md" in capsys.readouterr().err
    hits = run_json(capsys, "search", "caching", "--kb", "small", "--json")
    assert isinstance(hits, list) and hits[0]["page"] == "good/"


def test_empty_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    (tmp_path / "empty").mkdir()
    assert main(["index", str(tmp_path / "empty")]) == 1
    assert "no documentation files" in capsys.readouterr().err
