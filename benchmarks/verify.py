"""`python -m benchmarks.verify`: the grounding check's speed, and the data behind its thresholds.

Speed: each case's question is searched (ten sections); its written answer is padded with
sentences of those sections (inline code, a link) to 2,000 characters; ``verify`` and
``ground`` (attribution, then verify) are timed over several rounds.

Thresholds: the written answers (a JSON file: case id → answer, ``{docs}`` standing for the
``_docs`` URL) give *positives*, each claim block scored against its own case's sections
and each written citation against the section it cites; the same blocks and sentences
scored against the sections of another case give *negatives*, leaving out every section
that this case's own search ranks in its top ``NEAR`` (a section near its question may
answer it: the top ten's edge moves with any ranking change, and a section just past it
is not a wrong one).
The report lists both distributions and, per threshold, the share of positives kept and
of negatives let through.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common
from citewise.config import Settings
from citewise.evaluation.cases import Case, load_cases
from citewise.graph.citations import find_citations
from citewise.graph.prompts import section_title
from citewise.grounding import BLOCK_THRESHOLD, CITATION_THRESHOLD, ground, verify
from citewise.grounding.markdown import sentence_around, without_links
from citewise.grounding.overlap import content_words, support
from citewise.grounding.verify import Sources, claims
from citewise.kb import KnowledgeBase, Library
from citewise.models import Citation, Hit

ANSWER_CHARS = 2000
SECTIONS = 10
NEAR = 3 * SECTIONS
"""A case's negatives leave out the sections its own search ranks this high."""
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def load_answers(path: Path) -> dict[str, str]:
    raw: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    docs = raw.get("_docs", "")
    return {k: v.replace("{docs}", docs) for k, v in raw.items() if not k.startswith("_")}


def _query(case: Case) -> str:
    # A follow-up ("Which services does it start?") needs its earlier turns to be searched.
    return " ".join(m["content"] for m in case.messages if m["role"] == "user")


def padded(answer: str, hits: Sequence[Hit], size: int = ANSWER_CHARS) -> str:
    """``answer`` grown to ``size`` characters with sentences of ``hits`` (one linked)."""
    text = answer
    for hit in hits:
        body = hit.chunk.text.partition("\n\n")[2] or hit.chunk.text
        for sentence in body.replace("\n", " ").split(". "):
            if len(text) >= size:
                return text[:size]
            text += f"\n\n{sentence.strip()}. See [{hit.chunk.title}]({hit.url})."
    return text[:size]


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "min": round(min(values, default=0.0), 3),
        "p10": round(_percentile(values, 0.1), 3),
        "median": round(statistics.median(values), 3) if values else 0.0,
        "p90": round(_percentile(values, 0.9), 3),
        "max": round(max(values, default=0.0), 3),
    }


def _rates(positives: Sequence[float], negatives: Sequence[float]) -> list[dict[str, float]]:
    return [
        {
            "threshold": t,
            "positives_kept": round(sum(p >= t for p in positives) / max(len(positives), 1), 3),
            "negatives_passed": round(sum(n >= t for n in negatives) / max(len(negatives), 1), 3),
        }
        for t in THRESHOLDS
    ]


def run_verify_benchmark(
    kb: KnowledgeBase, cases_path: Path, answers_path: Path, *, rounds: int = 50
) -> dict[str, Any]:
    """The speed and threshold figures over the cases that have a written answer."""
    answers = load_answers(answers_path)
    cases = [c for c in load_cases(cases_path) if c.parts and c.id in answers]
    hits = {c.id: kb.search(_query(c), top_k=SECTIONS, scope=c.scope) for c in cases}
    near = {c.id: {h.url for h in kb.search(_query(c), top_k=NEAR, scope=c.scope)} for c in cases}
    return {
        "cases": [c.id for c in cases],
        "speed": _speed(cases, answers, hits, rounds),
        "thresholds": _thresholds(cases, answers, hits, near),
        "current": {"citation": CITATION_THRESHOLD, "block": BLOCK_THRESHOLD},
    }


def _speed(
    cases: Sequence[Case], answers: dict[str, str], hits: dict[str, list[Hit]], rounds: int
) -> dict[str, Any]:
    timings: dict[str, list[float]] = {"verify": [], "ground": []}
    for case in cases:
        found = hits[case.id]
        text = padded(answers[case.id], found)
        titles = {hit.url: section_title(hit) for hit in found}
        citations = find_citations(text, titles)
        for _ in range(rounds):
            start = time.perf_counter()
            verify(text, found, case.question, citations)
            middle = time.perf_counter()
            ground(text, found, case.question, citations)
            timings["verify"].append((middle - start) * 1000)
            timings["ground"].append((time.perf_counter() - middle) * 1000)
    return {
        "answer_chars": ANSWER_CHARS,
        "sections": SECTIONS,
        "rounds": rounds,
        **{
            name: {
                "p50_ms": round(statistics.median(values), 3),
                "p95_ms": round(_percentile(values, 0.95), 3),
                "max_ms": round(max(values), 3),
            }
            for name, values in timings.items()
        },
    }


def wrong_sources(
    case_id: str, hits: dict[str, list[Hit]], near: dict[str, set[str]]
) -> list[Sources]:
    """Each other case's sections that ``case_id``'s own search does not rank near it.

    ``near`` holds each case's top ``NEAR`` section URLs; a case left with no section
    gives no negative.
    """
    found = [
        Sources([hit for hit in other if hit.url not in near[case_id]])
        for other_id, other in hits.items()
        if other_id != case_id
    ]
    return [sources for sources in found if sources.hits]


def _thresholds(
    cases: Sequence[Case],
    answers: dict[str, str],
    hits: dict[str, list[Hit]],
    near: dict[str, set[str]],
) -> dict[str, Any]:
    block_pos: list[float] = []
    block_neg: list[float] = []
    cite_pos: list[float] = []
    cite_neg: list[float] = []
    for case in cases:
        text = answers[case.id]
        own = Sources(hits[case.id])
        others = wrong_sources(case.id, hits, near)
        for block in claims(text):
            words = content_words(without_links(block.text))
            block_pos.append(own.best_section(words)[1])
            block_neg += [other.best_section(words)[1] for other in others]
        titles = {hit.url: section_title(hit) for hit in hits[case.id]}
        for citation in find_citations(text, titles):
            words = _sentence_words(text, citation)
            cite_pos.append(support(words, own.section_words[citation.url]))
            # The hardest wrong section: the best match among another case's sections.
            cite_neg += [max(support(words, s) for s in o.section_words.values()) for o in others]
    return {
        "block": {
            "positives": _summary(block_pos),
            "negatives": _summary(block_neg),
            "rates": _rates(block_pos, block_neg),
        },
        "citation": {
            "positives": _summary(cite_pos),
            "negatives": _summary(cite_neg),
            "rates": _rates(cite_pos, cite_neg),
        },
    }


def _sentence_words(text: str, citation: Citation) -> frozenset[str]:
    start, end = sentence_around(text, citation.start_index, citation.end_index)
    return content_words(without_links(text[start:end]))


def format_report(report: dict[str, Any]) -> str:
    """The report as Markdown (``benchmarks/verify.md``)."""
    speed = report["speed"]
    lines = [
        "# Grounding check: speed and thresholds",
        "",
        "Made by `python -m benchmarks.verify CASES --answers ANSWERS --kb KB --output FILE.json`.",
        f"Cases: {', '.join(report['cases'])}.",
        "",
        "Speed: each case's conversation is searched for ten sections; its written answer is "
        "padded with sentences of those sections (each linked) to the size below, and "
        "`verify` (names, links, citation support, unsupported blocks) and `ground` "
        "(attribution, then verify: what every answer pays) are timed.",
        "",
        "Thresholds: *positives* are the claim blocks of the written answers scored against "
        "their own case's sections (best section), and each citation the writer made scored "
        "against the section it cites (its sentence's content words found there); "
        "*negatives* are the same blocks and sentences scored against the sections of "
        f"another case, less any that this case's own search ranks in its top {NEAR} "
        "(the best of them: the hardest wrong section). A threshold keeps positives at or "
        "over it and lets the negatives at or over it through.",
        "",
        f"## Speed ({speed['answer_chars']}-character answer, {speed['sections']} sections, "
        f"{speed['rounds']} rounds per case)",
        "",
        "| step | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|",
    ]
    for name in ("verify", "ground"):
        s = speed[name]
        lines.append(f"| `{name}` | {s['p50_ms']} | {s['p95_ms']} | {s['max_ms']} |")
    for kind, title in (("block", "Block support (attribution)"), ("citation", "Citation support")):
        data = report["thresholds"][kind]
        current = report["current"][kind]
        lines += [
            "",
            f"## {title}: current threshold {current}",
            "",
            "| scores | n | min | p10 | median | p90 | max |",
            "|---|---|---|---|---|---|---|",
        ]
        for side in ("positives", "negatives"):
            s = data[side]
            lines.append(
                f"| {side} | {s['n']} | {s['min']} | {s['p10']} | {s['median']} | "
                f"{s['p90']} | {s['max']} |"
            )
        lines += ["", "| threshold | positives kept | negatives passed |", "|---|---|---|"]
        for rate in data["rates"]:
            lines.append(
                f"| {rate['threshold']} | {rate['positives_kept']} | {rate['negatives_passed']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.verify CASES --answers ANSWERS --kb KB``."""
    cli = common.parser("benchmarks.verify", __doc__)
    cli.add_argument("cases", help="question cases (e.g. ../shared/data/lgos-dev-cases.json)")
    cli.add_argument(
        "--answers",
        default="tests/data/lgos-dev-answers.json",
        help="written answers per case id (JSON; {docs} stands for its _docs URL)",
    )
    cli.add_argument("--kb", default="docs", help="knowledge base the cases ask")
    cli.add_argument("--rounds", type=int, default=50, help="timed runs per case")
    common.add_report_options(cli)
    args = cli.parse_args(argv)

    def run() -> int:
        kb = Library.shared(Settings.from_env()).open(args.kb)
        report = run_verify_benchmark(kb, Path(args.cases), Path(args.answers), rounds=args.rounds)
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.verify", run)


if __name__ == "__main__":
    sys.exit(main())
