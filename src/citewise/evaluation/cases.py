"""Question cases: a conversation, its settings, the pages answering each part, the reply shape."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewise.errors import SourceError

REPLY_SHAPES = (None, "clarify", "small_talk", "scope_hint")


@dataclass(frozen=True)
class Case:
    """One evaluation case.

    ``parts`` lists, for each part of the question, the pages (paths after the release, such
    as ``how-to-guides/openai-proxies/``) any of which answers it; no parts means the
    assistant should not search. ``reply`` is the expected shape of a reply that is not a
    plain answer: ``clarify``, ``small_talk`` or ``scope_hint`` (a restricted scope found
    nothing and the reply suggests scope ``all``).

    ``anchors`` (optional, one list per part) names the sections that answer each part, as
    ``page#anchor`` (a bare page means any of its sections): where a page holds many
    sections (an API reference), retrieving the page is not retrieving the answer.
    """

    id: str
    messages: tuple[dict[str, str], ...]
    settings: dict[str, Any]
    parts: tuple[tuple[str, ...], ...]
    reply: str | None
    anchors: tuple[tuple[str, ...], ...] | None = None

    @property
    def targets(self) -> tuple[tuple[str, ...], ...]:
        """What each part must retrieve: its sections when the case names them, else its pages."""
        return self.anchors if self.anchors is not None else self.parts

    @property
    def question(self) -> str:
        """The last user message: the query of a retrieval-only evaluation."""
        return self.messages[-1]["content"]

    @property
    def scope(self) -> str | None:
        scope = self.settings.get("scope")
        return None if scope in (None, "all") else str(scope)


def load_cases(path: Path) -> list[Case]:
    """Read and validate a cases file; errors name the case and the field at fault."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SourceError(f"cases file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(raw, list):
        raise SourceError(f"{path}: expected a JSON list of cases")
    cases = [_case(path, index, item) for index, item in enumerate(raw)]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise SourceError(f"{path}: case id {case.id!r} appears twice")
        seen.add(case.id)
    return cases


def _case(path: Path, index: int, item: object) -> Case:
    if not isinstance(item, dict):
        raise SourceError(f"{path}: case {index} is not an object")
    case_id = str(item.get("id", f"case-{index}"))

    def bad(field: str, why: str) -> SourceError:
        return SourceError(f"{path}: case {case_id!r}: {field} {why}")

    messages = item.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad("messages", "must be a non-empty list")
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise bad("messages", "must hold objects with a string 'content'")
    if messages[-1].get("role") != "user":
        raise bad("messages", "must end with the user's message")
    settings = item.get("settings", {})
    if not isinstance(settings, dict):
        raise bad("settings", "must be an object")
    parts = item.get("parts", [])
    if not isinstance(parts, list) or not all(
        isinstance(part, list) and part and all(isinstance(p, str) for p in part) for part in parts
    ):
        raise bad("parts", "must be a list of non-empty lists of page paths")
    anchors = item.get("anchors")
    if anchors is not None and (
        not isinstance(anchors, list)
        or len(anchors) != len(parts)
        or not all(
            isinstance(part, list) and part and all(isinstance(a, str) for a in part)
            for part in anchors
        )
    ):
        raise bad("anchors", "must be one non-empty list of 'page#anchor' strings per part")
    reply = item.get("reply")
    if reply not in REPLY_SHAPES:
        raise bad("reply", f"must be one of {', '.join(map(str, REPLY_SHAPES))}")
    return Case(
        id=case_id,
        messages=tuple({"role": m.get("role", "user"), "content": m["content"]} for m in messages),
        settings=dict(settings),
        parts=tuple(tuple(part) for part in parts),
        reply=reply,
        anchors=None if anchors is None else tuple(tuple(part) for part in anchors),
    )


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
