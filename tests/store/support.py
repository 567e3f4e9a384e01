"""Documents, chunks and vectors the store tests build their knowledge bases from."""

from __future__ import annotations

import hashlib

import numpy as np

from citewise.embedding.base import Vectors
from citewise.models import Chunk, Document
from citewise.store import DocumentUpdate, KBStore

DIM = 16


def unit(seed: str, n: int = 1) -> Vectors:
    """``n`` deterministic random unit vectors of dimension DIM."""
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    norms: Vectors = np.linalg.norm(v, axis=1, keepdims=True).astype(np.float32)
    return v / norms


def chunk(doc: str, pos: int, text: str, *, scope: str = "", page: str = "") -> Chunk:
    digest = hashlib.sha256(f"{doc}|{pos}|{text}".encode()).hexdigest()[:12]
    return Chunk(
        chunk_id=f"{doc}-{pos}-{digest}",
        doc_id=doc,
        position=pos,
        section_index=pos,
        text=text,
        title=f"{doc} title",
        heading_path=("Guide", doc),
        anchor=f"a{pos}",
        url=f"https://docs.example/{page}#a{pos}",
        page=page,
        scope=scope,
    )


def update(
    doc: str,
    texts: list[str],
    *,
    scope: str = "",
    page: str = "",
    skip: frozenset[str] = frozenset(),
) -> DocumentUpdate:
    """A full update for ``doc``, two windows per chunk; chunks whose text is in ``skip``
    get no vectors."""
    chunks = [chunk(doc, i, t, scope=scope, page=page) for i, t in enumerate(texts)]
    vectors = {c.chunk_id: unit(c.chunk_id, 2) for c in chunks if c.text not in skip}
    document = Document(
        doc, f"{doc} title", f"https://docs.example/{page}", page, "h-" + doc, scope
    )
    return DocumentUpdate(document, chunks, vectors)


BASE = [
    update("install", ["Install with pip", "Configure the server port"], page="getting-started/"),
    update("auth", ["API key authentication", "Rotate keys"], scope="guides", page="guides/auth/"),
]
BASE_IDS = {c.chunk_id for u in BASE for c in u.chunks}

CJK_TEXTS = {
    "weight": "hybrid 检索中的 vector_weight 控制向量分数与关键词分数的权重。",
    "delete": "删除文档时依靠 file_id 清理残留向量。",
    "parser": "GeneralParsers 负责解析文件，不负责向量检索。",
    "english": "The scheduler runs jobs in the cluster.",
    "weather": "今天天气晴朗，适合出门散步。",
}

# Identifiers among prose that uses their parts as words (store/identifiers.py).
IDENTIFIER_TEXTS = [
    "| `LGOS_OPENAI_API_PREFIX` | `/v1` | Where the routes mount. |",
    "Change the API prefix: the API prefix of the LGOS OpenAI API, prefix after prefix.",
    "Mount adapters with requests.Session.mount() and read r.json() or r.status_code.",
    "Pass --site-url to index a site; the site URL names each page.",
    "```\nfoo_bar = get_settings()\n```\nUse get_settings() to read settings.",
]
IDENTIFIER_QUERIES = [
    "LGOS_OPENAI_API_PREFIX", "How do I change lgos_openai_api_prefix?", "Session.mount",
    "json()", "what does --site-url do", "get_settings", "status_code and --site-url",
    "api prefix", "vector_weight 有什么作用", "do_it",
]  # fmt: skip


def texts_of(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def keyword_texts(kb: KBStore, query: str) -> set[str]:
    return {c.text for c, _ in kb.keyword(query, 100)}


def dense_ids(kb: KBStore) -> set[str]:
    return {c.chunk_id for c, _ in kb.dense(unit("q")[0], 1000)}


def assert_base_intact(kb: KBStore) -> None:
    """``kb`` holds exactly BASE, as a failed write must have left it."""
    assert [d.doc_id for d in kb.documents()] == ["auth", "install"]
    assert kb.chunk_ids() == BASE_IDS
    assert keyword_texts(kb, "telemetry fresh") == set()
    assert keyword_texts(kb, "rotate configure") == {"Rotate keys", "Configure the server port"}
    assert dense_ids(kb) == BASE_IDS
    assert "embedder" not in kb.meta()
