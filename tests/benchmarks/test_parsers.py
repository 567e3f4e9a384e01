"""`python -m benchmarks.parsers`: the LangRAG parser comparison set through every citewise
parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.parsers import load_experiments, main

from ..conftest import SHARED_DATA, require

SETS = SHARED_DATA / "langrag-benchmarks"


def test_langrag_configurations_map_to_citewise_strategies(tmp_path: Path) -> None:
    experiments, ks = load_experiments(require(SETS / "configs" / "parser_compare.json"))
    assert ks == [1, 3]
    # Three LangRAG experiments, two of which differ only in the parser mode (what varies here).
    assert [e.name for e in experiments] == ["section 200 hybrid", "parent_child 220/90 hybrid"]
    assert experiments[1].strategy.child_chars == 90
    assert "chunk_size 140 raised to 200" in experiments[0].notes
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    with pytest.raises(Exception, match="not a LangRAG config file"):
        load_experiments(broken)


def test_bench_parsers_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = require(SETS / "datasets" / "parser_compare_zh.json")
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    output = tmp_path / "report.json"
    argv = [str(dataset), "--embedder", "minilm", "--output", str(output)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "| minilm | section 200 hybrid | parsed |" in table
    rows = {(r["configuration"], r["parser"]): r for r in json.loads(output.read_text())["rows"]}
    assert {parser for _, parser in rows} == {"html", "text", "markdown", "parsed", "markitdown"}
    for configuration in ("section 200 hybrid", "parent_child 220/90 hybrid"):
        html, text, parsed = (rows[configuration, p] for p in ("html", "text", "parsed"))
        # The HTML parser keeps the image's alt text and every table cell, with headings.
        assert html["alt_text_kept"] == 1.0 and html["table_cells_kept"] == 1.0
        assert html["heading_hit@1"] == 1.0 and parsed["heading_hit@1"] == 1.0
        # Flat text finds the documents but has no headings to land on.
        assert text["hit@3"] == 1.0 and text["heading_hit@3"] == 0.0
        # markitdown (PyPI) as the external parser: its headings land, its tables are whole.
        external = rows[configuration, "markitdown"]
        assert external["heading_hit@1"] == 1.0 and external["table_cells_kept"] == 1.0
