"""At most two documents are parsed at once per process, however many ingests run: the rest
queue (as LangRAG's seed bounds its parse jobs)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import citewise.kb.ingest
from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.kb import KBConfig, KnowledgeBase, source_from_bytes


def test_parsing_is_bounded_across_concurrent_ingests(
    tmp_path: Path, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = citewise.kb.ingest.parse_file
    lock = threading.Lock()
    running = peak = 0

    def slow_parse(*args: Any, **kwargs: Any) -> Any:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        try:
            time.sleep(0.2)
            return real(*args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(citewise.kb.ingest, "parse_file", slow_parse)
    settings = Settings(home=tmp_path / "home")
    kbs = [
        KnowledgeBase.create(
            f"kb{n}", KBConfig(embedder="minilm"), settings=settings, embedder=minilm
        )
        for n in range(5)
    ]
    errors: list[BaseException] = []

    def ingest(kb: KnowledgeBase) -> None:
        try:
            kb.add_documents([source_from_bytes("a.md", f"# {kb.name}\n\nText.\n".encode())])
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=ingest, args=(kb,)) for kb in kbs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert 1 <= peak <= 2
    assert all([d.doc_id for d in kb.documents()] == ["a.md"] for kb in kbs)
