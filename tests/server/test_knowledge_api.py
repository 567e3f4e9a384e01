"""The knowledge-base REST API on a real uvicorn server: CRUD, uploads, deletion, search, auth."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from citewise.config import Limits, ParseSettings, Settings
from citewise.server.errors import install_error_handlers
from citewise.server.knowledge import router
from citewise.server.runtime import Runtime, ServerOptions
from citewise.server.testing import running

ADMIN = {"Authorization": "Bearer admin-secret"}
GUIDE = (
    "# Guide\n\n## Keys\n\nSend the API key as a bearer token.\n\n## Logs\n\nLogs go to stderr.\n"
)


@contextmanager
def serving(settings: Settings) -> Iterator[httpx.Client]:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    app.state.admin_keys = frozenset({"admin-secret"})
    app.state.api_keys = frozenset({"user-key"})
    app.state.runtime = Runtime(settings, ServerOptions(), model_factory=lambda: None)
    with running(app) as url, httpx.Client(base_url=url, headers=ADMIN, timeout=60) as client:
        yield client


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with serving(Settings(home=tmp_path)) as client:
        yield client


def error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return dict(body["error"])


def test_admin_key_is_required(api: httpx.Client) -> None:
    for key in (None, "wrong"):
        headers = {"Authorization": f"Bearer {key}"} if key else {"Authorization": ""}
        response = api.get("/v1/knowledge-bases", headers=headers)
        assert response.status_code == 401
        assert error(response)["code"] == "invalid_api_key"
    # A valid API key is known, but not for this: a 403 that says what is needed.
    response = api.get("/v1/knowledge-bases", headers={"Authorization": "Bearer user-key"})
    assert response.status_code == 403
    assert error(response)["code"] == "admin_key_required"


def test_create_list_show_delete(api: httpx.Client) -> None:
    created = api.post(
        "/v1/knowledge-bases",
        json={"name": "team", "strategy": "parent_child", "child_chars": 300,
              "retrieval": {"top_k": 3, "search_type": "full_text"}, "description": "handbook"},
    )  # fmt: skip
    assert created.status_code == 201
    body = created.json()
    assert (body["id"], body["strategy"], body["child_chars"], body["documents"]) == (
        "team", "parent_child", 300, 0,
    )  # fmt: skip
    assert body["retrieval"]["top_k"] == 3 and body["retrieval"]["search_type"] == "full_text"
    assert api.post("/v1/knowledge-bases", json={"name": "team"}).status_code == 409
    assert [kb["id"] for kb in api.get("/v1/knowledge-bases").json()["data"]] == ["team"]
    assert api.get("/v1/knowledge-bases/team").json()["description"] == "handbook"
    deleted = api.delete("/v1/knowledge-bases/team")
    assert deleted.json() == {"id": "team", "object": "knowledge_base.deleted", "deleted": True}
    missing = api.get("/v1/knowledge-bases/team")
    assert missing.status_code == 404 and error(missing)["type"] == "not_found_error"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"name": "x", "strategy": "tree"}, None),
        ({"name": "x", "retrieval": {"top_k": 0}}, "retrieval.top_k"),
        ({"name": "Bad Name!"}, None),
        ({"name": "x", "embedder": "nope"}, None),
    ],
)
def test_invalid_creates_are_400s(
    api: httpx.Client, body: dict[str, Any], param: str | None
) -> None:
    response = api.post("/v1/knowledge-bases", json=body)
    assert response.status_code == 400
    assert error(response)["param"] == param or param is None


def test_upload_list_search_and_delete_documents(api: httpx.Client) -> None:
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    upload = api.post(
        "/v1/knowledge-bases/docs/documents",
        files=[
            ("files", ("guide/keys.md", GUIDE.encode(), "text/markdown")),
            ("files", ("notes.txt", b"Release notes: version two ships in May.", "text/plain")),
        ],
    )
    assert upload.status_code == 200, upload.text
    assert sorted(upload.json()["added"]) == ["guide/keys.md", "notes.txt"]
    listed = api.get("/v1/knowledge-bases/docs/documents").json()["data"]
    assert [d["id"] for d in listed] == ["guide/keys.md", "notes.txt"]

    found = api.post(
        "/v1/knowledge-bases/docs/search",
        json={"query": "bearer token", "top_k": 1, "search_type": "full_text"},
    )
    assert found.status_code == 200
    [hit] = found.json()["data"]
    assert hit["doc_id"] == "guide/keys.md" and hit["rankers"] == ["keyword"]
    assert found.json()["options"]["search_type"] == "full_text"

    deleted = api.delete("/v1/knowledge-bases/docs/documents/guide/keys.md")
    assert deleted.status_code == 200
    assert deleted.json()["chunks_deleted"] == 3 and deleted.json()["deleted"] is True
    again = api.delete("/v1/knowledge-bases/docs/documents/guide/keys.md")
    assert again.status_code == 200
    assert again.json()["chunks_deleted"] == 0 and again.json()["deleted"] is False


def test_upload_errors(api: httpx.Client) -> None:
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    url = "/v1/knowledge-bases/docs/documents"
    unsupported = api.post(url, files=[("files", ("tool.exe", b"MZ", "application/octet-stream"))])
    assert unsupported.status_code == 400 and "unsupported format" in error(unsupported)["message"]
    over = b"x" * (Limits().max_file_bytes + 1)
    big = api.post(url, files=[("files", ("big.txt", over, "text/plain"))])
    assert big.status_code == 413 and error(big)["code"] == "file_too_large"
    assert api.get(f"{url}").json()["data"] == []
    assert (
        api.post(
            "/v1/knowledge-bases/none/documents", files=[("files", ("a.md", b"# A"))]
        ).status_code
        == 404
    )


def test_search_option_errors(api: httpx.Client) -> None:
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    url = "/v1/knowledge-bases/docs/search"
    bad = api.post(url, json={"query": "x", "search_type": "semantic"})
    assert bad.status_code == 400 and error(bad)["param"] == "search_type"
    no_model = api.post(url, json={"query": "x", "query_rewrite": "hyde"})
    assert no_model.status_code == 400 and "needs a chat model" in error(no_model)["message"]
    too_many = api.post(url, json={"query": "x", "top_k": 1000})
    assert too_many.status_code == 400 and error(too_many)["param"] == "top_k"
    old_name = api.post(url, json={"query": "x", "k": 3})
    assert old_name.status_code == 400 and error(old_name)["param"] == "k"


def test_search_scopes_are_checked_against_the_knowledge_base(api: httpx.Client) -> None:
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    for scope, name in (("guides", "keys.md"), ("notes", "notes.txt")):
        api.post(
            "/v1/knowledge-bases/docs/documents",
            files=[("files", (name, GUIDE.encode(), "text/markdown"))],
            data={"scope": scope},
        )
    url = "/v1/knowledge-bases/docs/search"
    found = api.post(url, json={"query": "bearer token", "scope": "notes"}).json()
    assert {hit["doc_id"] for hit in found["data"]} == {"notes.txt"}
    assert found["options"]["scope"] == "notes" and found["options"]["top_k"] == 10
    unknown = api.post(url, json={"query": "bearer token", "scope": "nowhere"})
    assert unknown.status_code == 400 and error(unknown)["param"] == "scope"
    assert "unknown scope 'nowhere'" in error(unknown)["message"]


def test_upload_parsed_content(api: httpx.Client) -> None:
    """An external parser's JSON beside the files: preferred over the file of the same id."""
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    url = "/v1/knowledge-bases/docs/documents"
    parsed = {
        "documents": [
            {
                "id": "guide/keys.md",
                "title": "Keys",
                "sections": [{"heading": "Tokens", "level": 2, "content": "Rotate tokens yearly."}],
            }
        ]
    }
    upload = api.post(
        url,
        files=[
            ("files", ("guide/keys.md", GUIDE.encode(), "text/markdown")),
            ("parsed", ("parsed.json", json.dumps(parsed).encode(), "application/json")),
        ],
        data={"scope": "ops"},
    )
    assert upload.status_code == 200, upload.text
    assert upload.json()["added"] == ["guide/keys.md"] and upload.json()["chunks"] == 1
    search = "/v1/knowledge-bases/docs/search"
    [hit] = api.post(search, json={"query": "rotate tokens", "search_type": "full_text"}).json()[
        "data"
    ]
    assert hit["heading_path"] == ["Keys", "Tokens"]
    assert hit["url"].endswith("guide/keys.md#tokens")
    assert (
        api.post(search, json={"query": "bearer", "search_type": "full_text"}).json()["data"] == []
    )
    # Parsed content alone, then malformed content: a 400 naming the problem, nothing lost.
    alone = {"id": "faq.txt", "text": "Answers to frequent questions."}
    only = api.post(url, files=[("parsed", ("p.json", json.dumps(alone).encode()))])
    assert only.status_code == 200 and only.json()["added"] == ["faq.txt"]
    bad = api.post(url, files=[("parsed", ("p.json", b"{not json"))])
    assert bad.status_code == 400 and "not valid JSON" in error(bad)["message"]
    empty = api.post(url, data={"scope": "ops"})
    assert empty.status_code == 400 and "nothing to add" in error(empty)["message"]
    listed = api.get(url).json()["data"]
    assert [(d["id"], d["scope"]) for d in listed] == [("faq.txt", ""), ("guide/keys.md", "ops")]


def test_document_metadata_is_listed_and_filters_a_search(api: httpx.Client) -> None:
    """Issue 34: a document's metadata in the listing, and ``doc_metadata`` in a search body."""
    api.post("/v1/knowledge-bases", json={"name": "docs"})
    url = "/v1/knowledge-bases/docs/documents"
    parsed = {
        "documents": [
            {"id": "a.md", "metadata": {"author": "Ada"}, "text": "Rotate tokens yearly."},
            {"id": "b.md", "metadata": {"author": "Alan"}, "text": "Rotate tokens monthly."},
        ]
    }
    upload = api.post(url, files=[("parsed", ("p.json", json.dumps(parsed).encode()))])
    assert upload.status_code == 200, upload.text
    listed = {d["id"]: d["metadata"] for d in api.get(url).json()["data"]}
    assert listed == {"a.md": {"author": "Ada"}, "b.md": {"author": "Alan"}}
    search = "/v1/knowledge-bases/docs/search"
    body = {
        "query": "rotate tokens",
        "search_type": "full_text",
        "doc_metadata": {"author": "alan"},
    }
    hits = api.post(search, json=body).json()["data"]
    assert [hit["doc_id"] for hit in hits] == ["b.md"]
    wrong = api.post(search, json={**body, "doc_metadata": ["author"]})
    assert wrong.status_code == 400 and "doc_metadata" in error(wrong)["message"]


def test_uploads_are_held_to_the_server_settings_limits(tmp_path: Path) -> None:
    tight = ParseSettings(limits=Limits(max_file_bytes=1000, max_sections=2))
    with serving(Settings(home=tmp_path, parse=tight)) as api:
        api.post("/v1/knowledge-bases", json={"name": "docs"})
        url = "/v1/knowledge-bases/docs/documents"
        big = api.post(url, files=[("files", ("big.md", b"x" * 1500, "text/markdown"))])
        assert big.status_code == 413
        # Read only to the limit + 1 byte, the limit of the server's settings.
        assert "big.md: file is 1001 bytes, over the 1000 bytes limit" in error(big)["message"]
        many = api.post(url, files=[("files", ("guide.md", GUIDE.encode(), "text/markdown"))])
        assert many.status_code == 413
        assert "guide.md: 3 sections, over the limit of 2" in error(many)["message"]
        assert api.get(url).json()["data"] == []
