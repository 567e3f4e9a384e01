"""`--vector-weight`: the embeddings' share of the hybrid fusion, on the LGOS docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import fail, run_json

QUESTION = "How do I put LGOS behind LiteLLM?"


def ranked(capsys: pytest.CaptureFixture[str], *flags: str) -> list[str]:
    hits = run_json(capsys, "search", QUESTION, "--kb", "lgos", "--top-k", "8", "--json", *flags)
    return [hit["chunk_id"] for hit in hits]


def test_the_weight_moves_hybrid_between_its_two_rankers(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vector, hybrid = ranked(capsys, "--search-type", "vector"), ranked(capsys)
    assert ranked(capsys, "--vector-weight", "1") == vector  # BM25 counts for nothing
    assert ranked(capsys, "--vector-weight", "0.5") == hybrid  # equal shares: the default
    assert ranked(capsys, "--vector-weight", "0.05") != hybrid
    assert "--vector-weight 2.0" in fail(capsys, "search", QUESTION, "--kb", "lgos",
                                          "--vector-weight", "2")  # fmt: skip
