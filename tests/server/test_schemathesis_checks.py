"""Schemathesis' own runner (``st run --checks all``) against ``citewise serve`` with API keys
and a small knowledge base: every response conforms to ``/openapi.json`` (status codes,
content types, headers, bodies), authentication is never ignored, unsupported methods get a
405, no 5xx; on a bounded budget (10 examples per operation, a fixed seed).

Two checks are excluded (RELIABILITY.md says why): the data checks
``positive_data_acceptance`` and ``negative_data_rejection``: the schema does not yet state
every value rule the server enforces (index strategies, the URL to crawl, no NUL in any
string) and the request models coerce ``0`` to ``false``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.test_receipt import serve

EXCLUDED = "positive_data_acceptance,negative_data_rejection"
# Not run: deleting the knowledge base (every other operation would then be a 404), and the
# document content route, whose URL the document DELETE route's ``{doc_id:path}`` matches
# too (a DELETE there deletes the document ``x/content``; Allow says so, the schema cannot).
SKIPPED = r"^/v1/knowledge-bases/\{kb\}(/documents/\{doc_id\}/content)?$"


@pytest.mark.slow
def test_schemathesis_checks_pass_over_the_whole_schema(tmp_path: Path) -> None:
    runner = shutil.which("st", path=str(Path(sys.executable).parent))
    if runner is None:
        pytest.skip("schemathesis is not installed")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Guide\n\n## Install\n\nInstall with pip.\n")
    home = tmp_path / "home"
    indexed = subprocess.run(
        [sys.executable, "-m", "tests.reliability.hashing_cli", "index", str(docs), "--kb", "t",
         "-q"],
        env={"CITEWISE_HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    with serve(home, CITEWISE_API_KEYS="k", CITEWISE_ADMIN_KEYS="k", CITEWISE_KB="t") as (
        base,
        _,
    ):
        done = subprocess.run(
            [runner, "run", f"{base}/openapi.json", "-H", "Authorization: Bearer k",
             "--checks", "all", "--exclude-checks", EXCLUDED, "--max-examples", "10",
             "--seed", "2", "--workers", "1",
             "--exclude-path-regex", SKIPPED],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,  # its cache goes there
        )  # fmt: skip
    summary = done.stdout[done.stdout.rfind("Test cases:") :]
    print(summary)
    assert done.returncode == 0, done.stdout[-6000:]
