"""`python -m benchmarks.pages`: a built site parsed page by page, measured against its truth."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.pages import BuiltSite, bench_built_site, load_parser

PAGE = """<html><body><div class="body" role="main"><section id="guide">
<h1>Guide<a class="headerlink" href="#guide">¶</a></h1><p>Intro.</p>
<section id="usage"><h2>Usage<a class="headerlink" href="#usage">¶</a></h2>
<dl class="py function"><dt class="sig sig-object py" id="tiny.run"><span
class="sig-name descname">tiny.run</span></dt><dd><p>Run it.</p></dd></dl>
<h3>No id</h3><p>Text.</p></section></section></div></body></html>"""


def test_a_built_site_is_measured_page_by_page(tmp_path: Path) -> None:
    built = tmp_path / "site"
    (built / "guide").mkdir(parents=True)
    (built / "guide" / "index.html").write_text(PAGE, encoding="utf-8")
    truth = {
        "pages": {"guide/": {"all_ids": ["guide", "usage", "tiny.run"], "sections": [
            {"ids": ["guide"], "title": "Guide", "level": 1},
            {"ids": ["usage"], "title": "Usage", "level": 2},
            {"ids": ["missing"], "title": "Gone", "level": 2},
        ]}},
        "inventory": [{"type": "py:function", "name": "tiny.run", "uri": "guide/#tiny.run"}],
    }  # fmt: skip
    (tmp_path / "truth.json").write_text(json.dumps(truth), encoding="utf-8")
    site = BuiltSite("tiny", built, tmp_path / "truth.json", "https://t.example/", "sphinx")
    result = bench_built_site(site, load_parser(None))
    assert result["pages"] == 1
    assert result["anchors_on_page_pct"] == 100.0
    assert result["anchored"] == 3  # usage, tiny.run, and "No id" at the nearest id before it
    assert result["api_indexed_pct"] == 100.0
    assert result["summary"]["missed_sections"] == 1  # "Gone" is on no page
