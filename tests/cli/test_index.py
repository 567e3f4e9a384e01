"""`citewise index` and `citewise sections`: reports, refused input and the stored index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.cli import main
from tests.conftest import LGOS, LGOS_SITE, LGOS_VERSION, require

from .support import BASE, fail, run, run_json


def test_sections_json_lists_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    docs = require(LGOS / "docs")
    out = run(capsys, "sections", str(docs), "--site-url", LGOS_SITE, "--version", LGOS_VERSION,
              "--json")  # fmt: skip
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 133
    assert {"url", "heading_path", "page"} <= set(records[0])
    by_url = {record["url"]: record for record in records}
    assert by_url[BASE]["page"] == "" and by_url[BASE]["heading_path"] == ["LangGraph OpenAI Serve"]
    install = by_url[BASE + "getting-started/#install"]
    assert install["heading_path"] == ["Get Started With The Package", "Install"]


def test_index_reports_and_reindexes_only_what_changed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = home / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAbout caching.\n")
    (docs / "b.md").write_text("# B\n\nAbout retries.\n")
    first = run_json(capsys, "index", str(docs), "--kb", "small", "--json", "-q")
    assert first["kb"] == "small" and sorted(first["added"]) == ["a.md", "b.md"]
    (docs / "b.md").write_text("# B\n\nAbout retries and backoff.\n")
    summary = run(capsys, "index", str(docs), "--kb", "small", "-q")
    assert summary.startswith("small: 2 files (0 added, 1 updated, 1 unchanged, 0 removed)")
    rebuilt = run_json(capsys, "index", str(docs), "--kb", "small", "--rebuild", "--json", "-q")
    assert sorted(rebuilt["added"]) == ["a.md", "b.md"]


def test_index_without_a_folder_or_release_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "give a FOLDER to index" in fail(capsys, "index")
    assert "--release takes no FOLDER" in fail(capsys, "index", "docs", "--release", "a/b@1.0")


def test_a_missing_folder_is_one_line_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "folder not found" in fail(capsys, "index", "/nonexistent/docs", "--kb", "lgos")


@pytest.mark.parametrize("content", [b"# Broken\n\x00\x00", b"# Caf\xe9\n"])
def test_bad_file_leaves_the_stored_index_intact(
    home: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    docs = home / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA page about caching.\n")
    run(capsys, "index", str(docs), "--kb", "small", "-q")
    (docs / "bad.md").write_bytes(content)
    (docs / "good.md").unlink()
    assert main(["index", str(docs), "--kb", "small", "-q"]) == 1
    assert "bad.md" in capsys.readouterr().err
    hits = run_json(capsys, "search", "caching", "--kb", "small", "--json")
    assert isinstance(hits, list) and hits[0]["page"] == "good/"


def test_empty_folder_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "empty").mkdir()
    assert "no documentation files" in fail(capsys, "index", str(home / "empty"))


def test_sections_page_form_overrides_the_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    (tmp_path / "docs" / "usage.rst").write_text("Usage\n=====\n\nText.\n", encoding="utf-8")
    docs = str(tmp_path / "docs")
    by_default = run(capsys, "sections", docs, "--site-url", "https://x.io/", "--json")
    assert json.loads(by_default)["url"] == "https://x.io/usage.html"
    given = run(capsys, "sections", docs, "--site-url", "https://x.io/", "--json",
                "--page-form", "dirhtml")  # fmt: skip
    assert json.loads(given)["url"] == "https://x.io/usage/"
