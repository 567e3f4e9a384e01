"""Small defects found while testing reliability, each pinned: error types, sizes, params."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.errors import SourceError, TooLargeError
from citewise.limits import MIB, Limits, check_file_size
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.sources.archive import extract_docs


@pytest.fixture(scope="module")
def server(tiny_home: Path) -> Iterator[httpx.Client]:
    app = create_app(Settings(home=tiny_home), ServerOptions(kb="t"), model_factory=lambda: None)
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http


@pytest.fixture
def home(tiny_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEWISE_HOME", str(tiny_home))
    monkeypatch.delenv("CITEWISE_LLM_MODEL", raising=False)
    return tiny_home


def test_a_conflict_is_an_invalid_request_error(server: httpx.Client) -> None:
    response = server.post("/v1/knowledge-bases", json={"name": "t"})
    assert response.status_code == 409
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_an_upload_over_the_file_limit_is_not_reported_at_the_limit(
    server: httpx.Client,
) -> None:
    files = {"files": ("big.md", b"x" * (17 * MIB), "text/markdown")}
    response = server.post("/v1/knowledge-bases/t/documents", files=files)
    assert response.status_code == 413
    message = response.json()["error"]["message"]
    # Only the limit + 1 bytes were read: the size is "more than", never "16.0 MiB, over".
    assert "big.md: file is more than the 16.0 MiB limit" in message
    assert "16.0 MiB, over" not in message


def test_a_file_size_over_the_limit_is_shown_as_it_is() -> None:
    with pytest.raises(TooLargeError, match=r"file is 17\.0 MiB, over the 16\.0 MiB limit"):
        check_file_size(Limits(), "a.pdf", 17 * MIB)
    with pytest.raises(TooLargeError, match=r"file is more than the 16\.0 MiB limit"):
        check_file_size(Limits(), "a.pdf", Limits().max_file_bytes + 1)


def test_an_invalid_kb_name_in_the_settings_names_the_setting(server: httpx.Client) -> None:
    body = {
        "model": "citewise-rag",
        "messages": [{"role": "user", "content": "install"}],
        "metadata": {"citewise_settings": json.dumps({"kb": "../x"})},
    }
    response = server.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "metadata.citewise_settings.kb"


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--kb", "t", "--top-k", "-5"],
        ["kb", "search", "t", "q", "--top-k", "0"],
    ],
)
def test_a_top_k_below_one_fails_in_one_line_naming_the_flag(
    home: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("citewise: error: --top-k ")
    assert captured.out == ""


def test_a_failed_create_leaves_no_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path))
    assert main(["kb", "create", "y", "--embedder", "nope"]) == 1
    assert "unknown embedder 'nope'" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "kb").iterdir()) == []


def test_a_lock_file_stays_while_its_knowledge_base_exists(home: Path) -> None:
    assert (home / "kb" / ".t.lock").exists()


@pytest.mark.parametrize(
    "data", [b"hello, not an archive\n", b"BZh9 not bzip2", b"\xfd7zXZ\x00 not xz"]
)
def test_a_non_archive_is_refused_in_one_line_naming_it(tmp_path: Path, data: bytes) -> None:
    archive = tmp_path / "release-1.0.tar.gz"
    archive.write_bytes(data)
    with pytest.raises(SourceError) as raised:
        extract_docs(archive, tmp_path / "out")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("release-1.0.tar.gz: not a readable")


def test_ask_with_an_unknown_kb_prints_the_error_alone(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "how do I install?", "--kb", "nope"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("citewise: error: unknown knowledge base 'nope'")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--kb", "t", "--scope", "nope"],
        ["kb", "search", "t", "q", "--scope", "nope"],
    ],
)
def test_both_searches_refuse_an_unknown_scope_alike(
    home: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "citewise: error: unknown scope 'nope' in 't': use one of all, guide, library, ref"
    )
