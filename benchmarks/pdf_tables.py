"""PDF tables: how many known rows come out whole, as Markdown rows, before and after pdfplumber.

Generates PDFs with ruled tables of known content (fpdf2, seeded: 2-6 columns, 3-40 rows,
cells from one word to a sentence that wraps, some empty, one or two tables per page with text
around them), parses them with citewise's PDF parser, and counts:

- rows as Markdown: known rows found as the exact Markdown row line (``| a | b |``);
- rows kept together: rows whose cells all appear, in order, on one line of the text
  (pypdf's text alone, the old behaviour, is measured the same way);
- chunks splitting a row: chunks (400 characters) with a table line cut in the middle;
- seconds per page, pypdf text alone against text plus table detection.

    PYTHONPATH=src:. .venv/bin/python benchmarks/pdf_tables.py [--pdfs 40]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import time

from pypdf import PdfReader

from citewise.chunking import chunk_sections
from citewise.parsing.common import markdown_table
from citewise.parsing.pdf import parse_pdf
from tests.parsing.pdfs import pdf_with_tables

WORDS = "alpha beta gamma delta region share lead budget north south east west quota".split()


def cell(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return ""
    count = 1 if roll < 0.6 else rng.randint(2, 4) if roll < 0.9 else rng.randint(8, 16)
    return " ".join(rng.choice(WORDS) for _ in range(count)) + str(rng.randint(0, 999))


def make(rng: random.Random) -> tuple[bytes, list[list[str]]]:
    pages: list[list[str | list[list[str]]]] = []
    rows: list[list[str]] = []
    for _ in range(rng.randint(1, 2)):
        items: list[str | list[list[str]]] = [f"Report section {rng.randint(1, 99)}."]
        for _ in range(rng.randint(1, 2)):
            width = rng.randint(2, 6)
            table = [[f"Col{c}" for c in range(width)]]
            table += [[cell(rng) for _ in range(width)] for _ in range(rng.randint(3, 12))]
            items += [table, "Text after the table."]
            rows += table[1:]
        pages.append(items)
    return pdf_with_tables(pages), rows


def together(row: list[str], text: str) -> bool:
    cells = [c for c in row if c]
    for line in text.splitlines():
        position = 0
        for c in cells:
            found = line.find(c, position)
            if found < 0:
                break
            position = found + len(c)
        else:
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdfs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    totals = {"rows": 0, "markdown_rows": 0, "together_after": 0, "together_before": 0,
              "chunks": 0, "split_chunks": 0, "pages": 0, "seconds_before": 0.0,
              "seconds_after": 0.0}  # fmt: skip
    for _ in range(args.pdfs):
        data, rows = make(rng)
        started = time.perf_counter()
        reader = PdfReader(io.BytesIO(data))
        before = "\n".join(page.extract_text() for page in reader.pages)
        totals["seconds_before"] += time.perf_counter() - started
        started = time.perf_counter()
        sections = parse_pdf(data, doc_id="t.pdf", site_url="", version=None)
        totals["seconds_after"] += time.perf_counter() - started
        totals["pages"] += len(reader.pages)
        after = "\n".join(section.text for section in sections)
        lines = set(after.splitlines())
        for row in rows:
            totals["rows"] += 1
            markdown_row = markdown_table([row, row]).splitlines()[0]
            totals["markdown_rows"] += markdown_row in lines
            totals["together_after"] += together(row, after)
            totals["together_before"] += together(row, before)
        for chunk in chunk_sections(sections, 400):
            totals["chunks"] += 1
            body = chunk.text.split("\n\n", 1)[-1]
            totals["split_chunks"] += any(
                line.startswith("|") != line.endswith("|") for line in body.splitlines()
            )
    rows = totals["rows"]
    report = {
        "pdfs": args.pdfs,
        "pages": totals["pages"],
        "known_rows": rows,
        "rows_as_markdown": round(totals["markdown_rows"] / rows, 4),
        "rows_kept_together_after": round(totals["together_after"] / rows, 4),
        "rows_kept_together_before_pypdf_only": round(totals["together_before"] / rows, 4),
        "chunks": totals["chunks"],
        "chunks_splitting_a_row": totals["split_chunks"],
        "ms_per_page_pypdf_only": round(1000 * totals["seconds_before"] / totals["pages"], 1),
        "ms_per_page_with_tables": round(1000 * totals["seconds_after"] / totals["pages"], 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
