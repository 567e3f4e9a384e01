# Run: .venv/bin/pip install trafilatura lxml_html_clean && .venv/bin/python benchmarks/pages_extractors.py
# (built sites under /work/sites/.build, see /work/sites/README.md)
"""How many of a page's headings with ids survive main-content extraction: trafilatura vs
citewise's generic fallback (theme recognition off), on built pages."""
import sys, re, time
from pathlib import Path
from bs4 import BeautifulSoup
import trafilatura
from citewise.parsing import html_themes
from citewise.parsing.html import parse_html

pages = []
for site in ("packaging", "pluggy", "requests", "dirty-equals", "mkdocstrings-python"):
    built = Path("/work/sites/.build") / site / "site"
    pages += sorted(p for p in built.rglob("*.html") if "_" not in p.parts[-2][:1])[:8]
H = re.compile(r"^h[1-6]$")
want = kept_t = kept_g = code_t = code_g = code_total = 0
tt = tg = 0.0
for p in pages:
    text = p.read_text(encoding="utf-8", errors="replace")
    soup = BeautifulSoup(text, "html.parser")
    main = soup.select_one("article.md-content__inner, article[role=main], div.body, div[role=main]")
    if main is None:
        continue
    ids = {h.get("id") or (h.parent.get("id") if h.parent and h.parent.name == "section" else None) for h in main.find_all(H)}
    ids.discard(None)
    want += len(ids); code_total += len(main.find_all("pre"))
    t0 = time.perf_counter()
    out = trafilatura.extract(text, output_format="html", include_formatting=True, favor_recall=True) or ""
    tt += time.perf_counter() - t0
    tsoup = BeautifulSoup(out, "html.parser")
    kept_t += len(ids & {t.get("id") for t in tsoup.find_all(True)})
    code_t += len(tsoup.find_all(["pre", "code"]))
    # citewise's generic fallback: no theme recognised
    saved = html_themes.THEMES
    html_themes.THEMES = ()
    t0 = time.perf_counter()
    secs = parse_html(text, doc_id="x.html", site_url="https://x/", version=None, scope_from_nav=False)
    tg += time.perf_counter() - t0
    html_themes.THEMES = saved
    kept_g += len(ids & {s.anchor for s in secs})
    code_g += sum(s.text.count("```") // 2 for s in secs)
print(f"pages {len(pages)}; heading ids in main content: {want}; <pre> blocks: {code_total}")
print(f"trafilatura: ids kept {kept_t}/{want}; code elements in output {code_t}; {tt:.1f} s")
print(f"citewise generic fallback: ids kept {kept_g}/{want} (top h1 cited by page URL); code blocks {code_g}; {tg:.1f} s")
