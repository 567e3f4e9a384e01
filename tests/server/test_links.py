"""Links to uploaded documents as third-party clients see them, through the openai SDK: the
answer's Markdown carries the annotation's absolute URL, and a browser opens it without a key."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from openai import OpenAI

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.links import LinkRewriter, rewrite_links
from citewise.server.testing import running

from .conftest import client

HANDBOOK = (
    "# Handbook\n\n## Accounts\n\nEvery new employee gets an account on the first day.\n\n"
    "## Laptops\n\nLaptops are handed out by the IT desk.\n"
)
QUESTION = "When does a new employee get an account?"
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, OpenAI]]:
    home = tmp_path_factory.mktemp("links") / "home"
    options = ServerOptions(
        kb="team", api_keys=frozenset({"sk-user"}), admin_keys=frozenset({"sk-admin"})
    )
    app = create_app(Settings(home=home), options, model_factory=lambda: None)
    with running(app) as url, client(url, key="sk-user") as sdk:
        admin = {"Authorization": "Bearer sk-admin"}
        created = httpx.post(f"{url}/v1/knowledge-bases", json={"name": "team"}, headers=admin)
        assert created.status_code == 201, created.text
        upload = httpx.post(
            f"{url}/v1/knowledge-bases/team/documents", headers=admin, timeout=120,
            files=[("files", ("onboarding.md", HANDBOOK.encode(), "text/markdown"))],
        )  # fmt: skip
        assert upload.status_code == 200, upload.text
        yield url, sdk


def test_the_markdown_link_is_the_annotations_absolute_url(served: tuple[str, OpenAI]) -> None:
    url, sdk = served
    response = sdk.responses.create(model="citewise-rag", input=QUESTION)
    part = response.output[0].content[0]  # type: ignore[union-attr]
    annotations = part.annotations  # type: ignore[union-attr]
    assert annotations
    for annotation in annotations:
        assert annotation.url.startswith(f"{url}/v1/knowledge-bases/team/documents/")  # type: ignore[union-attr]
        cited = part.text[annotation.start_index : annotation.end_index]  # type: ignore[union-attr]
        assert LINK.search(cited).group(1) == annotation.url  # type: ignore[union-attr]
    assert "](onboarding.md" not in part.text  # type: ignore[union-attr]


def test_streamed_chat_content_carries_the_same_links(served: tuple[str, OpenAI]) -> None:
    _, sdk = served
    stream = sdk.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    content, annotations = "", []
    for chunk in stream:
        if chunk.choices:
            content += chunk.choices[0].delta.content or ""
            annotations += getattr(chunk.choices[0].delta, "annotations", None) or []
    links = set(LINK.findall(content))
    urls = {a["url_citation"]["url"] for a in annotations}
    assert urls and urls <= links
    assert not any(link.startswith("onboarding.md") for link in links)


def test_a_browser_opens_the_signed_link_without_a_key_until_it_is_altered(
    served: tuple[str, OpenAI],
) -> None:
    url, sdk = served
    response = sdk.responses.create(model="citewise-rag", input=QUESTION)
    link = response.output[0].content[0].annotations[0].url  # type: ignore[union-attr]
    assert "expires=" in link and "signature=" in link
    page = httpx.get(link.split("#")[0], headers={"Accept": "text/html"})
    assert page.status_code == 200 and "Accounts" in page.text
    signed = link.split("#")[0]
    tampered = signed[:-1] + ("0" if signed[-1] != "0" else "1")
    assert httpx.get(tampered).status_code == 401
    other = re.sub(r"/documents/[^/]+/content", "/documents/other.md/content", link)
    assert httpx.get(other.split("#")[0]).status_code == 401


def test_a_link_cut_between_deltas_is_rewritten_whole() -> None:
    def publish(url: str) -> str | None:
        return "https://x.example/doc#a" if url == "doc.md#a" else None

    text = "See [Doc](doc.md#a) and [Site](https://s.example/) now."
    expected, moved = rewrite_links(text, publish)
    assert expected == "See [Doc](https://x.example/doc#a) and [Site](https://s.example/) now."
    assert expected[moved(text.index(" and")) :].startswith(" and")
    for size in (1, 2, 3, 7):
        rewriter = LinkRewriter(publish)
        pieces = [rewriter.feed(text[i : i + size]) for i in range(0, len(text), size)]
        assert "".join(pieces) + rewriter.flush() == expected
