"""The size limits cross into the parse worker: the worker parses within the limits its
caller was given (sent with the file), never limits of its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from citewise.config import Limits, ParseSettings
from citewise.errors import TooLargeError
from citewise.models import Section
from citewise.parsing import worker
from citewise.parsing.source import parse_file, parse_in_process
from citewise.sources import SourceFile

TIGHT = Limits(max_file_bytes=12_345, max_table_cells=10, max_sections=7, max_ocr_pages=3)
CSV = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"  # 12 cells


@pytest.fixture(autouse=True)
def fresh_workers() -> Iterator[None]:
    worker.stop_workers()
    yield
    worker.stop_workers()


def echo_limits(source: SourceFile, *, limits: Limits, **_: Any) -> list[Section]:
    """Runs in the worker: the limits it was called with, and its process id, as a section."""
    import os

    text = repr(sorted(asdict(limits).items()))
    return [Section(source.doc_id, "", (), 1, "", "", "", text, scope=str(os.getpid()))]


def _isolated(source: SourceFile, parse: Any, settings: ParseSettings) -> list[Section]:
    return worker.parse_isolated(
        source, parse=parse, site_url="", version=None, scope="", layout=None, settings=settings
    )


def test_the_worker_is_given_the_same_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # The environment says otherwise: the worker must not read it, but take what is sent.
    monkeypatch.setenv("CITEWISE_MAX_FILE_MB", "1")
    monkeypatch.setenv("CITEWISE_MAX_SECTIONS", "99")
    source = SourceFile("a.csv", Path("a.csv"), data=CSV, binary=True)
    [section] = _isolated(source, echo_limits, ParseSettings(limits=TIGHT))
    assert section.text == repr(sorted(asdict(TIGHT).items()))
    assert int(section.scope) != __import__("os").getpid()  # parsed in another process
    [default] = _isolated(source, echo_limits, ParseSettings())
    assert default.text == repr(sorted(asdict(Limits()).items()))


def test_a_limit_checked_by_the_parser_is_enforced_in_the_worker() -> None:
    source = SourceFile("t.csv", Path("t.csv"), CSV.decode())
    tight = ParseSettings(isolation="all", limits=TIGHT)
    # parse_in_process in the worker: the table is refused there (the parent checks only
    # the sections and text it gets back, never a table's shape).
    with pytest.raises(TooLargeError, match=r"t\.csv: a table of 12 cells, over the limit of 10"):
        _isolated(source, parse_in_process, tight)
    with pytest.raises(TooLargeError, match=r"t\.csv: a table of 12 cells, over the limit of 10"):
        parse_file(source, settings=tight)
    assert worker._IDLE  # a worker parsed it (and is kept: a refusal leaves it fine)
    assert parse_file(source, settings=ParseSettings(isolation="all"))[0].text.count("|") > 12
