"""The hostile files of issue 26: each small on disk and made to be a lot of work. Every one
is refused with a one-line error naming the file and the limit, or parsed, within 10 s and
512 MB (the parse worker's peak), and an ingest of it stores nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.errors import SourceError, TooLargeError
from citewise.kb import KBConfig, KnowledgeBase, source_from_bytes
from citewise.parsing import worker
from citewise.parsing.source import parse_file
from tests.parsing.hostile_files import (
    HOSTILE_FILES,
    docx_inflating,
    pdf_drawing,
    pdf_shared_stream,
    wide_csv,
)

SECONDS = 10.0
PEAK_MIB = 512


@pytest.fixture(scope="module", autouse=True)
def warm_worker() -> Iterator[None]:
    """A started parse worker: a server's is started by its first upload; the budget
    counts the parse, not the interpreter's start."""
    parse_file(source_from_bytes("warm.csv", b"a,b\n1,2\n"))
    yield
    worker.stop_workers()


def _worker_peak_mib() -> float:
    """The largest peak resident size (VmHWM) of the idle parse workers."""
    peaks = [0.0]
    for idle in worker._IDLE:
        status = Path(f"/proc/{idle.process.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
        peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_a_hostile_file_is_refused_or_parsed_within_the_budget(name: str) -> None:
    data = HOSTILE_FILES[name]()
    assert len(data) < 1024 * 1024  # small on disk, as the probe's were
    started = time.perf_counter()
    try:
        sections = parse_file(source_from_bytes(name, data))
    except SourceError as error:
        message = str(error)
        assert message.startswith(f"{name}: ") and "\n" not in message
        assert "limit" in message or "budget" in message
    else:
        assert sections and all(section.doc_id == name for section in sections)
    elapsed = time.perf_counter() - started
    assert elapsed < SECONDS + 0.5, f"{name} took {elapsed:.1f} s"
    assert _worker_peak_mib() < PEAK_MIB


@pytest.mark.parametrize(
    ("name", "make", "limit"),
    [
        ("inflating.docx", docx_inflating, "over the limit of 100 times"),
        ("drawing.pdf", lambda: pdf_drawing(2 * 1024 * 1024), "the limit per page"),
        ("shared.pdf", lambda: pdf_shared_stream(25, 800 * 1024), "MiB of content, the limit"),
        ("wide.csv", wide_csv, "columns, over the limit of 1,000"),
        ("long.csv", lambda: wide_csv(columns=1000, rows=600), "cells, over the limit"),
    ],
)
def test_each_cap_names_its_limit(name: str, make: object, limit: str) -> None:
    assert callable(make)
    with pytest.raises(TooLargeError, match=limit):
        parse_file(source_from_bytes(name, make()))


def test_an_upload_of_a_hostile_file_stores_nothing(tmp_path: Path, minilm: Embedder) -> None:
    settings = Settings(home=tmp_path / "home")
    kb = KnowledgeBase.create("k", KBConfig(embedder="minilm"), settings=settings, embedder=minilm)
    kb.add_documents([source_from_bytes("a.md", b"# A\n\nKept.\n")])
    before = kb.store.chunk_ids()
    with pytest.raises(TooLargeError, match="inflating.docx: word/document.xml expands"):
        kb.add_documents([source_from_bytes("inflating.docx", docx_inflating())])
    assert [doc.doc_id for doc in kb.documents()] == ["a.md"]
    assert kb.store.chunk_ids() == before


def test_a_parse_over_its_time_budget_is_killed_and_the_next_one_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 900 KiB of drawing operators on each of 10 pages: under the per-page and per-file
    # caps, about 15 s of pypdf 7 (one such page took 15 s of pypdf 4, 1.5 s of pypdf 7).
    slow = source_from_bytes("slow.pdf", pdf_drawing(900 * 1024, pages=10))
    monkeypatch.setenv("CITEWISE_PARSE_SECONDS", "1.5")
    started = time.perf_counter()
    with pytest.raises(TooLargeError, match=r"slow\.pdf: parsing took longer than 1\.5 s"):
        parse_file(slow)
    assert time.perf_counter() - started < 4
    assert parse_file(source_from_bytes("after.csv", b"a,b\n1,2\n"))[0].text


def test_a_parse_over_its_memory_budget_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # 7 MB of words in five paragraphs (deflated about 4 times: under every cap); python-docx
    # holds the XML tree, each paragraph's text and its words: far more than 16 MiB over
    # what an idle worker has mapped.
    import io
    import zipfile

    from tests.parsing.hostile_files import _CONTENT_TYPES, _DOC_HEAD, _DOC_TAIL, _RELS

    chunk = " ".join(f"w{n}" for n in range(12_000))
    paragraph = f"<w:p><w:r><w:t>{chunk * 20}</w:t></w:r></w:p>"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", _DOC_HEAD + paragraph * 5 + _DOC_TAIL)
    # A fresh worker: one that parsed larger files earlier in this process maps more, and
    # the budget below must sit just over what a new worker maps.
    worker.stop_workers()
    assert parse_file(source_from_bytes("warm.csv", b"a,b\n1,2\n"))[0].text
    idle = worker._IDLE[-1]
    status = Path(f"/proc/{idle.process.pid}/status").read_text()
    mapped = int(next(x for x in status.splitlines() if x.startswith("VmSize:")).split()[1])
    budget = mapped // 1024 + 16
    monkeypatch.setenv("CITEWISE_PARSE_MEMORY_MB", str(budget))
    with pytest.raises(TooLargeError, match=rf"big\.docx: parsing needed more than {budget} MiB"):
        parse_file(source_from_bytes("big.docx", buffer.getvalue()))
    monkeypatch.delenv("CITEWISE_PARSE_MEMORY_MB")
    assert parse_file(source_from_bytes("after.csv", b"a,b\n1,2\n"))[0].text


def test_a_zip_member_larger_than_declared_is_not_read_past_its_size() -> None:
    # The central directory says 1 KB; the deflated data holds 5 MB. zipfile stops at the
    # declared size and fails the CRC: the file is refused, never inflated whole.
    import io
    import zipfile

    data = docx_inflating(5 * 1024 * 1024)
    archive = zipfile.ZipFile(io.BytesIO(data))
    info = archive.getinfo("word/document.xml")
    declared = info.file_size.to_bytes(4, "little")
    lying = data.replace(declared, (1000).to_bytes(4, "little"))
    assert lying != data
    with pytest.raises(SourceError, match=r"liar\.docx: not a readable DOCX"):
        parse_file(source_from_bytes("liar.docx", lying))
