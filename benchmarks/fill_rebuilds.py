"""Keyword-matrix rebuilds while a text-first knowledge base fills in its vectors (issue 30).

Usage::

    PYTHONPATH=SRC python benchmarks/fill_rebuilds.py WORKDIR [--docs 5183] [--batch 256]

SciFact's abstracts are written as one chunk each, text first (``vectors_later``); then their
vectors (random unit vectors: only the writes matter here) are filled in batch by batch, as
``kb/vector_fill.py`` does, with one keyword search after each batch, as a user asking while
the knowledge base embeds. The matrix is built in the caller (``impacts_in_background=False``)
so every rebuild is counted and timed; in a server the same builds run in the background,
competing with the embedder for the CPU. ``SRC`` picks the code measured (main's or a branch's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np

from citewise.models import Chunk, Document
from citewise.store import DocumentUpdate, SQLiteStore, sqlite_impact

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/scifact"


def _vector(seed: str) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal((1, 384)).astype(np.float32)
    return v / np.linalg.norm(v)


def run(work: Path, docs: int, batch: int, data: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in (data / "corpus.jsonl").open()][:docs]
    queries = [json.loads(line)["text"] for line in (data / "queries.jsonl").open()]
    builds: list[float] = []
    real = sqlite_impact.build

    def counted(conn: sqlite3.Connection, generation: str) -> sqlite_impact.ImpactIndex:
        started = time.perf_counter()
        out = real(conn, generation)
        builds.append(time.perf_counter() - started)
        return out

    sqlite_impact.build = counted
    store = SQLiteStore(work, impacts_in_background=False)
    kb = store.create("kb")
    updates, vectors = [], {}
    for row in rows:
        text = f"{row['title']} {row['text']}"
        chunk = Chunk(
            chunk_id=f"{row['_id']}-0", doc_id=row["_id"], position=0, section_index=0,
            text=text, title=row["title"], heading_path=(row["title"],), anchor="",
            url=f"https://scifact.example/{row['_id']}", page=row["_id"], scope="",
        )  # fmt: skip
        document = Document(
            doc_id=row["_id"], title=row["title"], url=chunk.url, page=row["_id"],
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
        )  # fmt: skip
        updates.append(DocumentUpdate(document, [chunk], {}))
        vectors[chunk.chunk_id] = _vector(chunk.chunk_id)
    kb.apply(updates, vectors_later=True)
    kb.keyword(queries[0], 10)  # the matrix of the text, built once
    before = len(builds)
    ids = list(vectors)
    started, cpu = time.perf_counter(), time.process_time()
    for n, i in enumerate(range(0, len(ids), batch)):
        kb.fill_vectors({c: vectors[c] for c in ids[i : i + batch]})
        kb.keyword(queries[(n + 1) % len(queries)], 10)
    out = {
        "chunks": len(ids),
        "batches": -(-len(ids) // batch),
        "matrix_builds_during_fill": len(builds) - before,
        "build_seconds": round(sum(builds[before:]), 2),
        "fill_seconds": round(time.perf_counter() - started, 2),
        "fill_cpu_seconds": round(time.process_time() - cpu, 2),
    }
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=Path)
    parser.add_argument("--docs", type=int, default=5183)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    print(json.dumps(run(args.work, args.docs, args.batch, args.data)))


if __name__ == "__main__":
    main()
