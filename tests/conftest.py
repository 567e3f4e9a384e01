"""Shared fixtures: the shared data folder, isolated settings and an indexed LGOS release."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from tests.kb_support import make_kb, minilm  # noqa: F401  (fixtures for KB tests)

REPO = Path(__file__).resolve().parents[1]
# A worktree outside the project folder names the shared data with CITEWISE_TEST_DATA.
SHARED_DATA = Path(os.environ.get("CITEWISE_TEST_DATA") or REPO.parent / "shared" / "data")
LGOS = SHARED_DATA / "lgos-docs-0.12.0"
LGOS_SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
LGOS_VERSION = "0.12.0"


# The test modules that take longest, marked ``slow`` so ``pytest -m "not slow"`` is the fast
# subset (README). Chosen by measuring, not guessing: ``pytest --durations=0``, one process per
# test directory at nice 19 (load 8-20 on 2 cores), each module's setup + call + teardown, the
# session's LGOS index left out (every run that uses it pays it once, whichever module is first);
# seconds as measured there. The 35 modules of 8 s or more took 1,113 s of the 1,940 s.
# Measured again on 2026-12-06 (``pytest -m "not slow" --durations=0`` in one process, load 3):
# the fast subset had grown to 395 s (237 s of CPU); the 20 modules marked with that date, each
# 4 s or more, took 234 s of it.
SLOW_MODULES = frozenset({
    "benchmarks.test_ingest",  # 10
    "benchmarks.test_langrag_configs",  # 16
    "benchmarks.test_serve",  # 31 (2026-12-06)
    "benchmarks.test_sites",  # 21
    "cli.test_grounding",  # 25
    "cli.test_kb_overlap",  # 9
    "cli.test_main",  # 11
    "cli.test_query",  # 9
    "cli.test_serve",  # 16
    "embedding.test_e5",  # 27
    "grounding.test_dev_cases",  # 9
    "integrations.test_langbot",  # 24
    "integrations.test_lgos",  # 12
    "kb.test_crawling",  # 9
    "kb.test_disk_full",  # 63
    "kb.test_feedback",  # 5 (2026-12-06)
    "kb.test_knowledge_base",  # 8
    "kb.test_vector_fill",  # 38 (2026-12-06)
    "parsing.test_hostile_files",  # 15
    "parsing.test_html_deep",  # 17
    "parsing.test_myst",  # 10
    "parsing.test_pdf_content",  # 5 (2026-12-06)
    "parsing.test_rst",  # 17
    "reliability.test_full_disk",  # 18
    "reliability.test_fuzz_options",  # 13
    "reliability.test_fuzz_parsers",  # 14
    "reliability.test_kill_store_phase",  # 60
    "reliability.test_readers_during_rebuild",  # 22
    "reliability.test_schemathesis",  # 32
    "reliability.test_sigkill",  # 54
    "retrieval.test_pipeline",  # 5 (2026-12-06)
    "server.test_chat_rating",  # 7 (2026-12-06)
    "server.test_diagnostics_page",  # 4 (2026-12-06)
    "server.test_full_disk_upload",  # 7 (2026-12-06)
    "server.test_fuzz",  # 17
    "server.test_grounding",  # 5 (2026-12-06)
    "server.test_knowledge_api",  # 5 (2026-12-06)
    "server.test_metrics_multiprocess",  # 6 (2026-12-06)
    "server.test_multi_kb",  # 5 (2026-12-06)
    "server.test_structured",  # 4 (2026-12-06)
    "server.test_web",  # 56 (2026-12-06: the browser runs where Chromium is installed)
    "server.test_widget_browser",  # 5 (2026-12-06: a browser too)
    "sources.test_crawl_hostile",  # 6 (2026-12-06)
    "sources.test_docsite",  # 4 (2026-12-06)
    "sources.test_package",  # 86
    "sources.test_package_sites",  # 15
    "sources.test_release",  # 140
    "store.test_postgres_bm25",  # 27 (2026-12-06)
    "store.test_store_contract",  # 33
    "test_doors",  # 209
    "test_limits",  # 8
    "test_llamacpp_real",  # 46
    "test_llm",  # 4 (2026-12-06)
    "test_mcp",  # 14
    "test_mcp_libraries",  # 5 (2026-12-06)
})  # fmt: skip


def module_of(nodeid: str) -> str:
    """``tests/cli/test_main.py::test_x`` → ``cli.test_main`` (a SLOW_MODULES name)."""
    path = nodeid.split("::")[0].removeprefix("tests/").removesuffix(".py")
    return path.replace("/", ".")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if module_of(item.nodeid) in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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
