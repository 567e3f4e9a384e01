"""Crawled index vs the built site: every section URL an id of its served page, and the site's
headings and API objects indexed (``python benchmarks/crawl_conformance.py KB SITE_DIR
TRUTH.json BASE_URL``; the knowledge base was crawled from BASE_URL serving SITE_DIR)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bs4 import BeautifulSoup

from citewise.kb import KnowledgeBase


def main(kb_name: str, site: Path, truth_path: Path, base: str) -> dict[str, object]:
    kb = KnowledgeBase(kb_name)
    urls = {chunk.url for chunk in kb.store.get(sorted(kb.store.chunk_ids()))}
    recorded = {url[len(base) :] for url in urls if url.startswith(base)}
    ids: dict[str, set[str]] = {}
    broken = []
    for entry in sorted(recorded):
        page, _, anchor = entry.partition("#")
        if page not in ids:
            html = (site / page / "index.html").read_text(encoding="utf-8")
            soup = BeautifulSoup(html, "html.parser")
            ids[page] = {str(tag["id"]) for tag in soup.find_all(id=True)}
        if anchor and anchor not in ids[page]:
            broken.append(entry)
    truth = json.loads(truth_path.read_text())
    headings = set()
    for page, info in truth["pages"].items():
        for n, section in enumerate(info["sections"]):
            if n == 0:
                headings.add(page)
            elif section["ids"] and section.get("origin", "section") == "section":
                headings.add(f"{page}#{section['ids'][0]}")
    api = {item["uri"].replace("$", item["name"]) for item in truth["inventory"]
           if item["type"].startswith("py:") and item["type"] != "py:module"}  # fmt: skip
    found = {
        "section_urls": len(recorded),
        "broken": broken,
        "headings": len(headings),
        "headings_indexed": len(headings & recorded),
        "headings_missed": sorted(headings - recorded),
        "api_objects": len(api),
        "api_indexed": len(api & recorded),
    }
    return found


if __name__ == "__main__":
    result = main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
    print(json.dumps(result, indent=1))
