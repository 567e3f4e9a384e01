"""`python -m benchmarks.sites`: citewise's citations against real sites' built ground truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.sites.__main__ import main
from benchmarks.sites.conformance import bench_site, load_site, run_sites_benchmark
from benchmarks.sites.truth import Citation, compare_citations, load_truth
from citewise.errors import ConfigurationError

from ..conftest import SHARED_DATA, require

SHARED_SITES = SHARED_DATA / "sites"
BASE = "https://docs.example.org/en/1.0/"


def write_truth(path: Path, pages: dict[str, object], inventory: list[object]) -> Path:
    path.write_text(json.dumps({"pages": pages, "inventory": inventory}))
    return path


def sphinx_truth(tmp_path: Path) -> Path:
    """A two-page html-builder site: guide.html has two sections, api.html one class."""
    pages = {
        "": {"all_ids": ["welcome"], "sections": [{"ids": ["welcome"], "title": "Welcome"}]},
        "guide.html": {
            "all_ids": ["guide", "install", "extra-id"],
            "sections": [
                {"ids": ["guide"], "title": "Guide"},
                {"ids": ["install", "extra-id"], "title": "Install"},
            ],
        },
        "api.html": {"all_ids": ["api", "pkg.Thing", "pkg.Thing.run"],
                     "sections": [{"ids": ["api"], "title": "API"}]},
    }  # fmt: skip
    inventory = [
        {"type": "py:class", "name": "pkg.Thing", "uri": "api.html#pkg.Thing"},
        {"type": "py:method", "name": "pkg.Thing.run", "uri": "api.html#pkg.Thing.run"},
        {"type": "std:label", "name": "install", "uri": "guide.html#install"},
    ]
    return write_truth(tmp_path / "_site-truth.json", pages, inventory)


def test_comparison_counts_broken_and_missed_both_ways(tmp_path: Path) -> None:
    truth = load_truth(sphinx_truth(tmp_path), "sphinx")
    citations = [
        Citation(BASE, "Welcome", "index.rst"),
        Citation(BASE + "guide.html", "Guide", "guide.rst"),  # page top: the h1 section
        Citation(BASE + "guide.html#extra-id", "Install", "guide.rst"),  # a second id counts
        Citation(BASE + "guide/#install", "Install", "guide.rst"),  # dirhtml form: no such page
        Citation(BASE + "api.html#pkg.thing", "Thing", "api.rst"),  # anchor case differs
        Citation(BASE + "api.html#pkg.Thing.run", "run", "api.rst"),
        Citation(BASE + "api.html#pkg.Thing.run", "run", "api.rst"),  # cited twice
        Citation("https://elsewhere.org/x", "X", "x.rst"),
    ]
    result = compare_citations(citations, truth, BASE)
    summary = result["summary"]
    assert summary["citewise_rows"] == 8
    assert summary["broken"] == 3
    assert summary["broken_by_reason"] == {
        "page not in site": 1, "anchor not on page": 1, "outside the site": 1,
    }  # fmt: skip
    assert summary["broken_pct"] == 37.5
    assert result["duplicates"] == [BASE + "api.html#pkg.Thing.run"]
    # std:label is not an API object of a Sphinx site; api.html's h1 and pkg.Thing are missed
    assert summary["site_sections"] == 4 and summary["site_api_objects"] == 2
    assert summary["missed_by_origin"] == {"section": 1, "api:py:class": 1}
    assert summary["missed_sections_pct"] == 25.0 and summary["missed_api_pct"] == 50.0
    missed = {(m["page"], m["origin"]) for m in result["missed"]}
    assert missed == {("api.html", "section"), ("api.html", "api:py:class")}


def test_an_object_heading_counts_once_as_the_object(tmp_path: Path) -> None:
    """MkDocs lists an mkdocstrings heading in its search index and in objects.inv: one API
    object, not also a prose section."""
    pages = {"reference/": {"all_ids": ["pkg.run"], "sections": [
        {"ids": [], "title": "Reference"}, {"ids": ["pkg.run"], "title": "run"}]}}  # fmt: skip
    inventory = [{"type": "py:function", "name": "pkg.run", "uri": "reference/#pkg.run"}]
    truth = load_truth(write_truth(tmp_path / "t.json", pages, inventory), "mkdocs")
    result = compare_citations([Citation(BASE + "reference/", "Reference", "r.md")], truth, BASE)
    summary = result["summary"]
    assert (summary["site_sections"], summary["site_api_objects"]) == (1, 1)
    assert summary["missed_by_origin"] == {"api:py:function": 1}


def test_bad_truth_and_site_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "_site-truth.json").write_text("[1, 2]")
    with pytest.raises(ConfigurationError, match="not a site truth file"):
        load_truth(tmp_path / "_site-truth.json", "sphinx")
    (tmp_path / "site.json").write_text(json.dumps({"name": "x", "generator": "hugo"}))
    with pytest.raises(ConfigurationError, match="missing version, builder, docs_dir"):
        load_site(tmp_path)


def make_mkdocs_site(root: Path) -> Path:
    """A small MkDocs site whose truth is written by hand: the guide page's 'Upgrade' section
    is on the site but not in the docs (missed), and the site publishes no 'notes' page
    (its citations are broken)."""
    site = root / "tiny-1.0"
    docs = site / "docs"
    docs.mkdir(parents=True)
    (site / "mkdocs.yml").write_text("site_name: Tiny\nsite_url: https://tiny.example.org/\n")
    (docs / "index.md").write_text("# Tiny\n\nA tiny project.\n\n## Install\n\npip install.\n")
    (docs / "guide.md").write_text("# Guide\n\nHow to use it.\n\n## Usage\n\nCall it.\n")
    (docs / "notes.md").write_text("# Notes\n\nDraft notes.\n")
    pages = {
        "": {"all_ids": ["tiny", "install"], "sections": [
            {"ids": [], "title": "Tiny"}, {"ids": ["install"], "title": "Install"}]},
        "guide/": {"all_ids": ["guide", "usage", "upgrade"], "sections": [
            {"ids": [], "title": "Guide"}, {"ids": ["usage"], "title": "Usage"},
            {"ids": ["upgrade"], "title": "Upgrade"}]},
    }  # fmt: skip
    write_truth(site / "_site-truth.json", pages, [])
    record = {
        "name": "tiny", "version": "1.0", "generator": "mkdocs", "builder": "mkdocs",
        "docs_dir": "docs", "site_url": "https://tiny.example.org/", "site_version": None,
        "base_url": "https://tiny.example.org/", "published": "https://tiny.example.org/",
    }  # fmt: skip
    (site / "site.json").write_text(json.dumps(record))
    return site


def test_bench_on_a_synthetic_site_with_known_answers(tmp_path: Path) -> None:
    make_mkdocs_site(tmp_path)
    (tmp_path / "gone-2.0").mkdir()  # a folder without site.json is not a site
    report = run_sites_benchmark(tmp_path, only=["tiny", "absent"])
    tiny, absent = report["sites"]
    assert absent["status"] == "error" and "site description" in absent["error"]
    assert tiny["status"] == "ok", tiny
    s = tiny["summary"]
    assert s["citewise_rows"] == 5 and s["site_sections"] == 5
    assert s["broken"] == 1 and s["broken_by_reason"] == {"page not in site": 1}
    assert tiny["broken_examples"][0]["url"] == "https://tiny.example.org/notes/"
    assert s["missed_sections"] == 1 and tiny["missed_examples"][0]["ids"] == ["upgrade"]
    assert tiny["pass"] == {"broken_pct": False, "missed_api_pct": True,
                            "missed_sections_pct": False}  # fmt: skip
    assert report["sites_passed"] == 0 and report["sites_total"] == 2


def test_bench_sites_command_writes_json_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_mkdocs_site(tmp_path / "root")
    manifest = tmp_path / "sites.toml"
    manifest.write_text('[[site]]\nname = "tiny"\nversion = "1.0"\n\n'
                        '[[site]]\nname = "lost"\nversion = "2.0"\n')  # fmt: skip
    output = tmp_path / "out" / "sites.json"
    argv = ["--root", str(tmp_path / "root"), "--manifest", str(manifest)]
    assert main([*argv, "--output", str(output)]) == 0
    report = json.loads(output.read_text())
    assert [r["site"] for r in report["sites"]] == ["lost-2.0", "tiny-1.0"]
    assert report["sites"][0]["status"] == "error"  # in the manifest, not built
    table = output.with_suffix(".md").read_text()
    assert "| tiny-1.0 | mkdocs mkdocs | 5 | 1 (20.0%) FAIL |" in table
    assert capsys.readouterr().out.strip() == table.strip()


def compare_py_summary(site: Path, tmp_path: Path) -> dict[str, object]:
    """The shared compare.py's numbers for the sections `citewise sections --api` lists."""
    spec = json.loads((site / "site.json").read_text())
    version = ["--version", spec["site_version"]] if spec["site_version"] else []
    listed = subprocess.run(
        [sys.executable, "-m", "citewise", "sections", str(site / spec["docs_dir"]),
         "--site-url", spec["site_url"], *version, "--api", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    rows = tmp_path / f"{site.name}.jsonl"
    rows.write_text(listed.stdout)
    out = tmp_path / f"{site.name}-cmp.json"
    subprocess.run(
        [sys.executable, str(SHARED_SITES / "tools" / "compare.py"), str(rows), spec["base_url"],
         str(site / "_site-truth.json"), spec["generator"], str(out)],
        capture_output=True, check=True,
    )  # fmt: skip
    summary: dict[str, object] = json.loads(out.read_text())["summary"]
    return summary


def api_headings(truth_path: Path) -> list[tuple[str, str]]:
    """The truth's sections whose ids are all API objects' anchors (mkdocstrings headings)."""
    truth = json.loads(truth_path.read_text())
    anchors = {tuple(item["uri"].partition("#")[::2]) for item in truth["inventory"]
               if item["type"].startswith("py:")}  # fmt: skip
    return [(page, s["title"]) for page, info in truth["pages"].items() for s in info["sections"]
            if s["ids"] and all((page, i) in anchors for i in s["ids"])]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "record"),
    [
        ("starlette-0.47.3", {"generator": "mkdocs", "builder": "mkdocs",
                              "site_url": "https://www.starlette.io/", "site_version": None,
                              "base_url": "https://www.starlette.io/"}),
        ("click-8.5.0", {"generator": "sphinx", "builder": "dirhtml",
                         "site_url": "https://click.palletsprojects.com/en/",
                         "site_version": "8.5.x",
                         "base_url": "https://click.palletsprojects.com/en/8.5.x/"}),
    ],
)  # fmt: skip
def test_shared_sites_match_compare_py(
    name: str, record: dict[str, object], tmp_path: Path
) -> None:
    source = require(SHARED_SITES / name)
    site = tmp_path / name  # the shared data is read-only: site.json goes beside a link to it
    site.mkdir()
    for entry in source.iterdir():
        (site / entry.name).symlink_to(entry)
    (site / "site.json").write_text(json.dumps({"name": name, "version": "x", "docs_dir": "docs",
                                                **record}))  # fmt: skip
    result = bench_site(site)
    assert result["status"] in ("ok", "citewise_failed"), result
    ours = result["summary"]
    theirs = compare_py_summary(site, tmp_path)
    for key in ("citewise_rows", "citewise_unique", "duplicate_urls", "site_pages",
                "site_api_objects", "broken", "missed_api"):  # fmt: skip
        assert ours[key] == theirs[key], key
    # compare.py counts an object's heading twice (prose and API): here it is the object only
    headings = api_headings(site / "_site-truth.json")
    assert ours["site_sections"] == theirs["site_sections"] - len(headings)
    missed_headings = theirs["missed_sections"] - ours["missed_sections"]
    assert 0 <= missed_headings <= len(headings)
    assert ours["site_sections"] > 250  # both sites are real: hundreds of sections
    assert set(result["pass"]) == {"broken_pct", "missed_api_pct", "missed_sections_pct"}
