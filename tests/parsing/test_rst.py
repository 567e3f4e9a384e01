"""reStructuredText sections at the ids a Sphinx build gives them, checked against a real build."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from citewise.kb import parse_folder
from citewise.models import Section
from citewise.parsing.base import parser_for
from citewise.parsing.rst import RstParser, parse_rst, rst_page_path
from citewise.sources.nav import folder_api_reference

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
REQUESTS = SHARED_DATA / "requests-2.34.2"
SITE = "https://requests.readthedocs.io/en/"


def parse(text: str, doc_id: str = "user/guide.rst") -> list[Section]:
    return parse_rst(text, doc_id=doc_id, site_url=SITE, version="latest")


# --- the conformance test: a real Sphinx build of the requests docs ------------------------


@pytest.fixture(scope="module")
def sphinx_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = REQUESTS / "docs"
    if not docs.is_dir():
        pytest.skip(f"requests 2.34.2 docs not found at {docs.resolve()} (shared data absent)")
    pytest.importorskip("sphinx", reason="the Sphinx build needs sphinx (the dev extra)")
    out = tmp_path_factory.mktemp("sphinx") / "html"
    # autodoc imports the package: the release's own source, not an installed requests.
    env = {**os.environ, "PYTHONPATH": str(REQUESTS / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "dirhtml", str(docs), str(out),
         "-d", str(out.parent / "doctrees")],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"sphinx-build could not run: {done.stderr[-500:]}")
    return out


@pytest.fixture(scope="module")
def ours() -> dict[str, Section]:
    docs = REQUESTS / "docs"
    if not docs.is_dir():
        pytest.skip("requests 2.34.2 docs not found (shared data absent)")
    found: dict[str, Section] = {}
    # Served as dirhtml by a Read the Docs setting outside the source: the page form is given.
    sections = parse_folder(
        docs, site_url="", version=None, api=folder_api_reference(docs), page_form="dirhtml"
    )
    for section in sections:
        assert section.url not in found, f"two sections share {section.url}"
        found[section.url] = section
    return found


def built_sections(out: Path) -> tuple[set[str], dict[str, str]]:
    """Every ``<section id>`` of the built pages but each page's first (its bare URL), and
    each page's first id."""
    found: set[str] = set()
    tops: dict[str, str] = {}
    for html in out.rglob("index.html"):
        relative = html.parent.relative_to(out).as_posix()
        page = "" if relative == "." else f"{relative}/"
        if page.startswith(("_", "genindex", "search", "py-modindex")):
            continue
        ids = re.findall(r'<section id="([^"]+)"', html.read_text(encoding="utf-8"))
        if ids:
            tops[page] = ids[0]
        found.update(f"{page}#{anchor}" for anchor in ids[1:])
    return found, tops


def inventory(out: Path) -> set[str]:
    """The Python objects of ``objects.inv`` as ``page/#anchor``."""
    lines = (out / "objects.inv").read_bytes().split(b"\n", 4)
    found = set()
    for line in zlib.decompress(lines[4]).decode().splitlines():
        name, role, _priority, uri = line.split(" ", 4)[:4]
        if role.startswith("py:"):
            found.add(uri.replace("$", name))
    return found


def test_every_section_id_matches_the_sphinx_build(
    sphinx_build: Path, ours: dict[str, Section]
) -> None:
    built, tops = built_sections(sphinx_build)
    prose = {url for url in ours if "#" in url} - inventory(sphinx_build)
    assert sorted(prose - built) == [], "section ids the build does not have"
    assert sorted(built - prose) == [], "built section ids we did not find"
    # Each page's first title is its bare URL, as for Markdown pages.
    pages = {s.page for s in ours.values()}
    assert pages == set(tops)


def test_every_api_object_matches_objects_inv(sphinx_build: Path, ours: dict[str, Section]) -> None:
    objects = inventory(sphinx_build)
    api = {url for url in ours if "#requests." in url or "#module-requests" in url}
    # `.. module::` (not automodule) is a target too: a section at its id.
    assert {"user/quickstart/#module-requests.models", "api/#module-requests"} <= api
    assert sorted(api - objects) == [], "API entries the build does not have"
    # Members inherited from C-implemented builtins (BaseException.add_note) included.
    assert sorted(objects - api) == [], "API entries we did not render"


def test_api_sections_read_like_the_reference(ours: dict[str, Section]) -> None:
    mount = ours["api/#requests.Session.mount"]
    assert mount.title == "mount()"
    assert mount.heading_path == (
        "Developer Interface", "Request Sessions", "class requests.Session", "mount()"
    )  # fmt: skip
    assert mount.text.startswith("```python\nmount(prefix, adapter)\n```")
    assert mount.level == 4
    assert "prefix" in mount.text and "Source code in `src/requests/sessions.py`" in mount.text
    auth = ours["api/#requests.Session.auth"]  # documented by a `#:` comment
    assert "Default Authentication tuple or object" in auth.text
    status = ours["api/#module-requests.status_codes"]
    assert status.level == 3


def test_api_titles_are_the_built_pages_titles(
    sphinx_build: Path, ours: dict[str, Section]
) -> None:
    """Each object is titled as the built page shows it (parsed by the HTML side), not by
    its whole signature: ``class requests.adapters.HTTPAdapter``, ``mount()``."""
    from citewise.parsing.html import parse_html

    built: dict[str, str] = {}
    for html in sphinx_build.rglob("index.html"):
        relative = html.parent.relative_to(sphinx_build).as_posix()
        page = "" if relative == "." else f"{relative}/"
        for section in parse_html(html.read_text(encoding="utf-8"), doc_id=f"{page}index.html",
                                  site_url="", version=None):  # fmt: skip
            if section.anchor and section.anchor in inventory_anchors(sphinx_build, page):
                built[f"{page}#{section.anchor}"] = section.title
    api = {url: s.title for url, s in ours.items() if url in inventory(sphinx_build)}
    assert len(api) == len(built) > 140
    # A hand-written `.. module::` target keeps its bare name: the page's opening prose
    # follows it and is that section's text.
    prose = {"user/quickstart/#module-requests.models": "requests.models"}
    differ = sorted((u, t, built.get(u)) for u, t in api.items() if built.get(u) != t)
    assert differ == [(u, t, f"module {t}") for u, t in prose.items()]
    adapter = ours["api/#requests.adapters.HTTPAdapter"]
    assert adapter.title == "class requests.adapters.HTTPAdapter"
    assert adapter.text.startswith("```python\nHTTPAdapter(pool_connections=")
    assert ours["api/#requests.Response.ok"].title == "property ok"
    assert ours["api/#requests.RequestException"].title == "exception requests.RequestException"


def inventory_anchors(out: Path, page: str) -> set[str]:
    return {url.partition("#")[2] for url in inventory(out) if url.startswith(f"{page}#")}


# --- ids, labels and URLs -------------------------------------------------------------------


def test_ids_follow_docutils_make_id_and_number_duplicates() -> None:
    text = (
        "Guide\n=====\n\nMake a Request\n--------------\n\nbody\n\nMake a Request\n--------------\n"
    )
    sections = parse(text)
    assert [s.anchor for s in sections] == ["", "make-a-request", "id1"]
    assert sections[1].url == f"{SITE}latest/user/guide/#make-a-request"
    assert sections[0].url == f"{SITE}latest/user/guide/"


def test_explicit_labels_name_their_section() -> None:
    text = ("Guide\n=====\n\n.. _proxies:\n\nProxies\n-------\n\nbody\n\n"
            ".. _api-cookies:\n\nCookies\n-------\n\nmore\n")  # fmt: skip
    assert [s.anchor for s in parse(text)] == ["", "proxies", "cookies"]


def test_code_blocks_are_fenced_and_roles_are_text() -> None:
    text = (
        "Guide\n=====\n\nUse :class:`Session <requests.Session>` and :meth:`~requests.get`, "
        "see :ref:`install`.\n\n.. code-block:: python\n\n    s = requests.Session()\n\n"
        "Literal::\n\n    >>> r = requests.get(url)\n\n.. note:: Keep it short.\n\n"
        ".. versionadded:: 2.1\n   The ``json`` argument.\n\n.. toctree::\n\n   user/install\n"
    )
    (section,) = parse(text)
    assert "Use `Session` and `get`, see install." in section.text
    assert "```python\ns = requests.Session()\n```" in section.text
    assert "```pycon\n>>> r = requests.get(url)\n```" in section.text
    assert "Note: Keep it short." in section.text
    assert "New in version 2.1: The `json` argument." in section.text
    assert "user/install" not in section.text


@pytest.mark.parametrize(
    ("doc_id", "page"),
    [("index.rst", ""), ("api.rst", "api/"), ("user/quickstart.rst", "user/quickstart/"),
     ("community/index.rst", "community/")],
)  # fmt: skip
def test_read_the_docs_page_paths(doc_id: str, page: str) -> None:
    assert rst_page_path(doc_id) == page


def test_rst_parser_is_registered() -> None:
    assert isinstance(parser_for("docs/user/quickstart.rst"), RstParser)


def test_broken_markup_still_parses() -> None:
    text = (
        "Guide\n=====\n\n.. unknown-directive:: x\n\n   inside\n\n:unknown:`role` and |undefined|\n"
    )
    (section,) = parse(text)
    assert "inside" in section.text and "role" in section.text


def test_tables_only_and_text_before_the_first_title() -> None:
    text = (
        "Before the title.\n\nThe ``Foo`` API\n===============\n\n+---+---+\n| a | b |\n"
        "+===+===+\n| 1 | 2 |\n+---+---+\n\n.. only:: html\n\n   Only in HTML.\n"
    )
    (section,) = parse(text)
    assert section.title == "The Foo API"
    assert section.text.startswith("Before the title.")
    assert "| a | b |\n| --- | --- |\n| 1 | 2 |" in section.text
    assert section.text.endswith("Only in HTML.")
