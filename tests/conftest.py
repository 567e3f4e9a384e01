"""Shared fixtures: the shared data folder, isolated settings and an indexed LGOS release."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from tests.kb_support import make_kb, minilm  # noqa: F401  (fixtures for KB tests)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
LGOS = SHARED_DATA / "lgos-docs-0.12.0"
LGOS_SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
LGOS_VERSION = "0.12.0"


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture(scope="session")
def lgos_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CITEWISE_HOME with the LGOS 0.12.0 docs indexed as knowledge base ``lgos``."""
    home = tmp_path_factory.mktemp("lgos-home")
    kb = KnowledgeBase("lgos", settings=Settings(home=home))
    kb.index_folder(require(LGOS / "docs"), site_url=LGOS_SITE, version=LGOS_VERSION)
    return home


@pytest.fixture(scope="session")
def lgos_kb(lgos_home: Path) -> KnowledgeBase:
    return KnowledgeBase("lgos", settings=Settings(home=lgos_home))
