"""`python -m benchmarks.ingest`: indexing speed of window and batch settings, same documents,
same run.

Each variant indexes the same sample of a BEIR corpus into a fresh temporary store with no
embedding cache, through the service layer's one pipeline (``KnowledgeBase.add_sections``).
Variants run in interleaved rounds, so load on a shared machine falls on all of them alike;
the figures that matter are the ratios to the first variant (today's windows and batch).
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import common
from citewise.config import Settings
from citewise.embedding.base import Embedder, Vectors
from citewise.embedding.minilm import MiniLMEmbedder
from citewise.evaluation.beir import load_beir
from citewise.kb import KnowledgeBase, Library
from citewise.models import Section


class CharWindows:
    """An embedder as it was before token windows: cut by characters (hides its tokens)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.window_chars = inner.window_chars

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


@dataclass(frozen=True)
class Variant:
    name: str
    make: Callable[[], Embedder]


def variants(batch_sizes: Sequence[int], threads: Sequence[int]) -> list[Variant]:
    """Character windows at today's batch first (the baseline), then token windows at each
    batch size and thread count."""
    found = [Variant("chars700 batch16", lambda: CharWindows(MiniLMEmbedder(batch_size=16)))]
    for batch in batch_sizes:
        for count in threads:

            def make(batch: int = batch, count: int = count) -> Embedder:
                return MiniLMEmbedder(batch_size=batch, threads=count)

            found.append(Variant(f"tokens254 batch{batch} threads {count or 'auto'}", make))
    return found


def sample_documents(folder: Path, count: int) -> dict[str, list[Section]]:
    """``count`` documents of a BEIR corpus, chosen by a hash of their ids (the same every
    run), as the one-section documents ``bench beir`` indexes."""
    corpus, _, _ = load_beir(folder, "test")
    chosen = sorted(corpus, key=lambda doc: hashlib.sha256(doc.encode()).hexdigest())[:count]
    return {
        doc: [Section(doc, title or doc, (title or doc,), 1, "", doc, doc, text)]
        for doc in chosen
        for title, text in [corpus[doc]]
    }


def run_ingest_benchmark(
    folder: Path,
    *,
    settings: Settings,
    documents: int = 300,
    rounds: int = 2,
    batch_sizes: Sequence[int] = (16, 32, 64),
    threads: Sequence[int] = (0,),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Seconds, windows and throughput per variant, and each one's ratio to the first."""
    sample = sample_documents(folder, documents)
    chosen = variants(batch_sizes, threads)
    seconds: dict[str, list[float]] = {v.name: [] for v in chosen}
    windows: dict[str, int] = {}
    for round_number in range(rounds):
        for variant in chosen:
            embedder = variant.make()
            embedder.embed_query("warm up")  # the model loads outside the timing
            with tempfile.TemporaryDirectory(prefix="citewise-ingest-bench-") as tmp:
                library = Library(settings.with_overrides(store_url=f"sqlite:///{tmp}"))
                kb = KnowledgeBase("ingest", library=library, embedder=embedder)
                started = time.perf_counter()
                report = kb.add_sections(sample)
                seconds[variant.name].append(time.perf_counter() - started)
                windows[variant.name] = report.windows_embedded
                library.close()
            if progress is not None:
                took = seconds[variant.name][-1]
                progress(f"round {round_number + 1}: {variant.name} {took:.1f}s")
    base = statistics.median(seconds[chosen[0].name])
    rows = {}
    for variant in chosen:
        median = statistics.median(seconds[variant.name])
        rows[variant.name] = {
            "seconds": round(median, 2),
            "windows": windows[variant.name],
            "windows_per_s": round(windows[variant.name] / median, 2),
            "documents_per_s": round(len(sample) / median, 2),
            "time_vs_baseline": round(median / base, 3),
        }
    return {"dataset": folder.name, "documents": len(sample), "rounds": rounds, "variants": rows}


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"# python -m benchmarks.ingest: {report['dataset']}, {report['documents']} documents, "
        f"median of {report['rounds']} interleaved rounds, no embedding cache",
        "",
        "| variant | windows | seconds | windows/s | documents/s | time vs baseline |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in report["variants"].items():
        lines.append(
            f"| {name} | {row['windows']} | {row['seconds']} | {row['windows_per_s']} | "
            f"{row['documents_per_s']} | {row['time_vs_baseline']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.ingest SCIFACT``: window and batch variants of the embedder."""
    cli = common.parser("benchmarks.ingest", __doc__)
    cli.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    cli.add_argument("--documents", type=int, default=300, help="documents in the sample")
    cli.add_argument("--rounds", type=int, default=2, help="interleaved rounds (median)")
    cli.add_argument("--batch-sizes", default="16,32,64", help="comma-separated")
    cli.add_argument("--threads", default="0", help="comma-separated; 0 = one per CPU")
    common.add_report_options(cli)
    args = cli.parse_args(argv)

    def run() -> int:
        report = run_ingest_benchmark(
            Path(args.dataset),
            settings=Settings.from_env(),
            documents=args.documents,
            rounds=args.rounds,
            batch_sizes=[int(n) for n in args.batch_sizes.split(",") if n],
            threads=[int(n) for n in args.threads.split(",") if n],
            progress=common.log,
        )
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.ingest", run)


if __name__ == "__main__":
    sys.exit(main())
