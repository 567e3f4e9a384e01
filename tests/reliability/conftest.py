"""A tiny documentation folder (two nav parts, so two scopes) indexed as knowledge base ``t``."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase

MKDOCS = "site_name: T\nnav:\n  - Guide:\n    - guide/a.md\n  - Ref:\n    - ref/b.md\n"


def write_tiny_docs(root: Path) -> Path:
    """``root/docs``: a guide page and a reference page, with a MkDocs nav."""
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "docs" / "ref").mkdir()
    (root / "mkdocs.yml").write_text(MKDOCS)
    (root / "docs" / "guide" / "a.md").write_text("# A\n\n## Setup\n\nInstall with pip.\n")
    (root / "docs" / "ref" / "b.md").write_text("# B\n\n## API\n\nThe search function.\n")
    return root / "docs"


@pytest.fixture(scope="session")
def tiny_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CITEWISE_HOME with knowledge base ``t`` (2 documents, scopes guide and ref)."""
    root = tmp_path_factory.mktemp("tiny")
    home = root / "home"
    KnowledgeBase("t", settings=Settings(home=home)).index_folder(write_tiny_docs(root))
    return home
