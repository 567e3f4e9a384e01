"""Image descriptions by a vision model (``CITEWISE_VISION_*``), against a local
OpenAI-compatible endpoint on 127.0.0.1 that reads chat-completions image input."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest

from citewise.parsing import vision
from citewise.testing import OpenAIStub, StubReply
from tests.kb_support import MakeKB

# A valid 2x2 PNG (python-docx reads its header for the picture's size).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb"
    "6QAAAABJRU5ErkJggg=="
)
SEEN = "A bar chart of request latency by month, highest in March."


def docx_with_picture(alt: str) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Latency", level=1)
    document.add_paragraph("The figure below shows it.")
    document.add_picture(io.BytesIO(PNG))
    inline = document.inline_shapes[0]._inline
    inline.docPr.set("descr", alt)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def image_input(body: dict[str, Any]) -> tuple[str, str]:
    """The text and image parts of the request's user message, as the reference shapes them
    (an error reply for anything else, so a wrong request fails the test)."""
    [message] = body["messages"]
    parts = {part["type"]: part for part in message["content"]}
    return parts["text"]["text"], parts["image_url"]["image_url"]["url"]


def endpoint(body: dict[str, Any]) -> StubReply:
    try:
        _, url = image_input(body)
    except (KeyError, ValueError, TypeError):
        return StubReply(status=400)
    if not url.startswith("data:image/png;base64,"):
        return StubReply(status=400)
    return StubReply(content=SEEN)


def test_pictures_get_the_vision_model_s_description(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIStub(endpoint) as server:
        monkeypatch.setenv("CITEWISE_VISION_MODEL", "vision-test")
        monkeypatch.setenv("CITEWISE_VISION_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEWISE_VISION_API_KEY", "vision-key")
        kb = make_kb("figures")
        kb.add_upload([("report.docx", docx_with_picture("Latency chart"))])
        [body] = server.requests
    assert body["model"] == "vision-test"
    prompt, url = image_input(body)
    assert prompt == vision.PROMPT
    assert base64.b64decode(url.partition(",")[2]) == PNG  # the image itself, as a data URL
    [hit] = kb.search("request latency highest in March", search_type="full_text", top_k=1)
    assert f"[Image: Latency chart. {SEEN}]" in hit.chunk.text


def test_without_the_setting_or_when_the_model_fails_the_alt_text_stays(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEWISE_VISION_MODEL", raising=False)
    kb = make_kb("plain")
    kb.add_upload([("a.docx", docx_with_picture("Latency chart"))])
    [hit] = kb.search("latency chart", search_type="full_text", top_k=1)
    assert "[Image: Latency chart]" in hit.chunk.text
    with OpenAIStub(lambda body: StubReply(status=500)) as server:
        monkeypatch.setenv("CITEWISE_VISION_MODEL", "vision-test")
        monkeypatch.setenv("CITEWISE_VISION_BASE_URL", server.base_url)
        failing = make_kb("failing")
        failing.add_upload([("b.docx", docx_with_picture("Another chart"))])
        assert server.requests  # asked (and retried once), then gave up
    [hit] = failing.search("another chart", search_type="full_text", top_k=1)
    assert "[Image: Another chart]" in hit.chunk.text


def pdf_with_image() -> bytes:
    import fpdf

    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Latency over the year.")
    pdf.image(io.BytesIO(PNG), x=10, y=30, w=50)
    return bytes(pdf.output())


def test_a_pdf_page_s_images_are_described_into_its_text(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIStub(endpoint) as server:
        monkeypatch.setenv("CITEWISE_VISION_MODEL", "vision-pdf")
        monkeypatch.setenv("CITEWISE_VISION_BASE_URL", server.base_url)
        kb = make_kb("pdf-figures")
        kb.add_upload([("report.pdf", pdf_with_image())])
        [body] = server.requests
    assert base64.b64decode(image_input(body)[1].partition(",")[2]).startswith(b"\x89PNG")
    [hit] = kb.search("highest in March", search_type="full_text", top_k=1)
    assert hit.chunk.page_number == 1 and f"[Image: {SEEN}]" in hit.chunk.text
