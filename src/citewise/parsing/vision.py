"""Image descriptions by a vision model behind an OpenAI-compatible endpoint (opt-in).

With ``CITEWISE_VISION_MODEL`` set (and ``CITEWISE_VISION_BASE_URL``, the endpoint's ``…/v1``
URL; ``CITEWISE_VISION_API_KEY`` if it wants one), each picture of a DOCX document (and
each image embedded in a PDF page, added to its page's text) is sent
to ``POST /chat/completions`` as the OpenAI reference describes image input: a user message
whose content holds a ``text`` part (the instruction) and an ``image_url`` part (the image as
a ``data:`` URL). The reply joins the picture's alt text, so what a figure shows is
searchable. A failed call keeps the alt text alone (logged), never fails the ingest; at
most :data:`MAX_IMAGES` pictures per document and :data:`MAX_IMAGE_BYTES` each are sent.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
from dataclasses import dataclass
from typing import Any

from citewise.config import VISION_VARIABLES, VisionSettings, environment, set_variables

__all__ = [
    "ENV",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "PROMPT",
    "VisionModel",
    "apply_env",
    "describe",
    "env_snapshot",
    "page_image_texts",
    "vision_model",
]

log = logging.getLogger(__name__)

MAX_IMAGES = 20
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_DESCRIPTION_CHARS = 600
PROMPT = (
    "Describe this image from a documentation page in one or two sentences, for search: "
    "what it shows, and any text, labels or numbers in it."
)
_CACHE_SIZE = 256
ENV = VISION_VARIABLES
"""The settings, sent with each parse to the parse worker (a process started earlier, whose
environment would otherwise be the one it started with)."""


def env_snapshot() -> dict[str, str | None]:
    """This process's vision settings (None: unset)."""
    return {name: environment().get(name) for name in ENV}


def apply_env(values: dict[str, str | None]) -> None:
    """Make ``values`` (from :func:`env_snapshot`) this process's vision settings."""
    set_variables({name: values.get(name) for name in ENV})


@dataclass(frozen=True)
class VisionModel:
    """The endpoint and model that describe images."""

    model: str
    base_url: str
    api_key: str = "unused"
    timeout: float = 60.0


def vision_model() -> VisionModel | None:
    """The configured vision model (``CITEWISE_VISION_*``), or None: descriptions are off."""
    settings = VisionSettings.from_env()
    model, base_url = settings.model, settings.base_url
    if not model:
        return None
    if not base_url:
        log.warning(
            "CITEWISE_VISION_MODEL is set without CITEWISE_VISION_BASE_URL: no descriptions"
        )
        return None
    return VisionModel(model, base_url.rstrip("/"), settings.api_key)


_described: dict[str, str] = {}
_lock = threading.Lock()


def page_image_texts(reader: Any, vision: VisionModel) -> dict[int, list[str]]:
    """A PDF's embedded images (pypdf ``page.images``) described by the vision model, as
    ``[Image: …]`` texts per page index (at most :data:`MAX_IMAGES` images per document)."""
    from citewise.parsing.common import image_text

    found: dict[int, list[str]] = {}
    left = MAX_IMAGES
    for index, page in enumerate(reader.pages):
        if left <= 0:
            break
        try:
            images = list(page.images)
        except Exception as error:  # pypdf raises many kinds of error on odd image streams
            log.warning("the images of page %d could not be read (%s)", index + 1, error)
            continue
        for image in images[:left]:
            left -= 1
            kind = _IMAGE_TYPES.get(str(image.name).rpartition(".")[2].lower(), "image/png")
            if text := describe(image.data, kind, vision):
                found.setdefault(index, []).append(image_text(text).strip())
    return found


_IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
                "jp2": "image/jp2", "tiff": "image/tiff", "gif": "image/gif"}  # fmt: skip


def describe(image: bytes, content_type: str, vision: VisionModel) -> str:
    """What the vision model says ``image`` shows ("" when it cannot say: too big, failed).

    The same image (by SHA-256) is described once per process and endpoint."""
    if not image or len(image) > MAX_IMAGE_BYTES:
        return ""
    key = f"{hashlib.sha256(image).hexdigest()} {vision.model} {vision.base_url}"
    with _lock:
        if key in _described:
            return _described[key]
    from openai import OpenAI, OpenAIError

    url = f"data:{content_type or 'image/png'};base64,{base64.b64encode(image).decode()}"
    client = OpenAI(base_url=vision.base_url, api_key=vision.api_key, timeout=vision.timeout,
                    max_retries=1)  # fmt: skip
    try:
        reply = client.chat.completions.create(
            model=vision.model,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": PROMPT},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }
            ],  # fmt: skip
            temperature=0,
        )
        text = " ".join((reply.choices[0].message.content or "").split())
    except (OpenAIError, IndexError) as error:
        log.warning("the vision model could not describe an image (%s): alt text only", error)
        return ""
    finally:
        client.close()
    text = text[:MAX_DESCRIPTION_CHARS]
    with _lock:
        if len(_described) >= _CACHE_SIZE:
            _described.clear()
        _described[key] = text
    return text
