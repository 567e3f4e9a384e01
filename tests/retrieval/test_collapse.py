"""One hit per section: a long section's matching chunks count once, on a real knowledge base."""

from __future__ import annotations

from citewise.kb import KnowledgeBase
from citewise.models import Chunk, Hit
from citewise.retrieval.collapse import collapse_sections
from citewise.retrieval.expand import expand_hits
from tests.kb_support import MakeKB, upload


def chunk(cid: str, doc: str, section: int, position: int) -> Chunk:
    return Chunk(cid, doc, position, section, f"{doc} > s{section}\n\ntext {cid}", doc, (doc,),
                 f"s{section}", f"{doc}#s{section}", doc)  # fmt: skip


def test_collapse_keeps_each_sections_best_chunk_in_order() -> None:
    a0, a1, b0, a2 = (chunk("a0", "a", 0, 0), chunk("a1", "a", 0, 1), chunk("b0", "b", 0, 0),
                      chunk("a2", "a", 1, 2))  # fmt: skip
    hits = [Hit(a1, 0.9, ("dense",)), Hit(b0, 0.8, ("dense",)), Hit(a0, 0.7, ("keyword",)),
            Hit(a2, 0.6, ("dense",))]  # fmt: skip
    out = collapse_sections(hits)
    assert [h.chunk.chunk_id for h in out] == ["a1", "b0", "a2"]
    assert out[0].score == 0.9 and [c.chunk_id for c in out[0].also] == ["a0"]
    assert out[0].rankers == ("dense", "keyword")
    assert out[1] == hits[1] and collapse_sections(out) == out


def test_a_collapsed_hit_still_gives_the_answer_all_its_matched_text() -> None:
    a0, a1, b0 = chunk("a0", "a", 0, 0), chunk("a1", "a", 0, 1), chunk("b0", "b", 0, 0)
    (hit, other) = collapse_sections([Hit(a1, 0.9, ("dense",)), Hit(b0, 0.8, ("dense",)),
                                      Hit(a0, 0.7, ("keyword",))])  # fmt: skip
    # In document order, whichever chunk ranked first: the prompt and the grounding check
    # read the same passage.
    assert hit.passage == f"{a0.text}\n\n{a1.text}"
    assert other.passage == b0.text


def long_kb(make_kb: MakeKB) -> KnowledgeBase:
    kb = make_kb("long", parent_chars=240)
    pool = "\n\n".join(
        f"The worker pool grows by {n} workers when the request queue is long." for n in range(8)
    )
    kb.add_documents([
        upload("pool.md", f"# Pool\n\n{pool}\n"),
        upload("queue.md", "# Queue\n\nThe request queue holds waiting work for the pool.\n"),
        upload("cache.md", "# Cache\n\nThe cache keeps results of the worker pool.\n"),
    ])  # fmt: skip
    return kb


def test_a_default_top_k_holds_each_section_once(make_kb: MakeKB) -> None:
    kb = long_kb(make_kb)
    query = "worker pool request queue"
    every = kb.search(query, top_k=5, collapse_sections=False)
    keys = [(h.chunk.doc_id, h.chunk.section_index) for h in every]
    assert len(keys) > len(set(keys))  # the long section takes several places uncollapsed
    hits = kb.search(query, top_k=5)
    keys = [(h.chunk.doc_id, h.chunk.section_index) for h in hits]
    assert len(keys) == len(set(keys))
    assert {h.chunk.doc_id for h in hits} == {"pool.md", "queue.md", "cache.md"}
    [pool] = [h for h in hits if h.chunk.doc_id == "pool.md"]
    assert pool.also and all(c.section_index == pool.chunk.section_index for c in pool.also)
    assert pool.as_json()["also_matched"] == [c.chunk_id for c in pool.also]
    for search_type in ("vector", "full_text"):
        found = kb.search(query, top_k=5, search_type=search_type)
        keys = [(h.chunk.doc_id, h.chunk.section_index) for h in found]
        assert len(keys) == len(set(keys)), search_type


def test_the_context_window_holds_the_sections_other_matches(make_kb: MakeKB) -> None:
    kb = long_kb(make_kb)
    [pool] = [h for h in kb.search("worker pool request queue", top_k=5) if h.also]
    [wide] = expand_hits(kb.store, [pool], 1)
    for other in pool.also:
        body = other.text.partition("\n\n")[2]
        assert body.splitlines()[0] in wide.chunk.text
    assert wide.chunk.text.count("Pool\n\n") == 1
