"""Three small knowledge bases in one home, for the tests of several knowledge bases."""

from __future__ import annotations

from pathlib import Path

from citewise.config import Settings
from citewise.kb import Library

PAGES = {
    "lgos": (
        "https://ilkersigirci.github.io/langgraph-openai-serve/", "0.12.0",
        {
            "auth.md": "# Authentication\n\n## API Key Middleware\n\nSet LGOS_API_KEYS to guard "
            "the /v1 routes of the graph server with bearer API keys.\n",
            "graphs.md": "# Custom Graphs\n\n## Register A Graph\n\nRegister a LangGraph "
            "graph with its input schema so that it is served as an OpenAI model.\n",
        },
    ),
    "requests": (
        "https://requests.readthedocs.io/en/v2.34.2/", "",
        {
            "quickstart.md": "# Quickstart\n\n## Timeouts\n\nPass timeout= to get() so an HTTP "
            "call to a slow web server gives up after that many seconds.\n",
            "advanced.md": "# Advanced Usage\n\n## Session Objects\n\nA Session keeps cookies "
            "and pooled TCP connections across HTTP calls to one host.\n",
        },
    ),
    "handbook": (
        "", "",
        {
            "leave.md": "# Leave\n\n## Holidays\n\nEvery employee has 25 days of paid holiday "
            "leave a year; unused days carry over to March.\n",
        },
    ),
}  # fmt: skip


def three_libraries(root: Path) -> Library:
    """``lgos`` (0.12.0), ``requests`` (2.34.2, from its site URL) and ``handbook`` in a
    home under ``root``; the library of that home."""
    settings = Settings(home=root / "home")
    library = Library(settings)
    for name, (site, version, files) in PAGES.items():
        folder = root / name
        folder.mkdir(parents=True)
        for page, text in files.items():
            (folder / page).write_text(text, encoding="utf-8")
        library.get(name).index_folder(folder, site_url=site, version=version or None)
    return library
