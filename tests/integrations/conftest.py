"""A small real knowledge base for the host tests: three LGOS pages in two scopes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.testing import ScriptedCall
from tests.conftest import LGOS, LGOS_SITE, require

KB = "docs"
PAGES = ("how-to-guides/authentication.md", "tutorials/custom-graphs.md", "getting-started.md")
SECTION = re.compile(r'<section url="([^"]+)" title="([^"]+)">')


@pytest.fixture(scope="session")
def docs_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CITEWISE_HOME holding knowledge base ``docs``: scopes how-to-guides and tutorials."""
    root = tmp_path_factory.mktemp("hosts")
    docs = root / "docs"
    for page in PAGES:
        target = docs / page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(require(LGOS / "docs" / page), target)
    home = root / "home"
    KnowledgeBase(KB, settings=Settings(home=home)).index_folder(docs, site_url=LGOS_SITE)
    return home


def cite_first(call: ScriptedCall) -> str:
    """A scripted answer citing the first section of its prompt (a real section URL)."""
    found = SECTION.search("\n".join(message.text for message in call.messages))
    assert found is not None, "the answer prompt holds no documentation"
    url, title = found.groups()
    return f"Add the API key middleware described in [{title}]({url}). Then restart."
