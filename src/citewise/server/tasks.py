"""Open WebUI's background tasks (title, tags, follow-ups…) answered without a chat model.

Open WebUI sends these to the chat model unless a Task Model is set; their prompt starts
with ``### Task:`` and asks for a JSON object. Without a chat model citewise would search
the docs for the prompt and quote passages as the chat's title, so it replies directly:
a title from the first question, and empty tags and follow-ups.
"""

from __future__ import annotations

import json
import re

__all__ = ["task_reply"]

_TASK = re.compile(r"^\s*###\s*Task:", re.IGNORECASE)
_HISTORY = re.compile(r"<chat_history>(.*?)</chat_history>", re.DOTALL | re.IGNORECASE)
_USER_LINE = re.compile(r"^\s*USER:\s*(.+)$", re.MULTILINE)
_TITLE_WORDS = 8


def _first_question(prompt: str) -> str:
    history = _HISTORY.search(prompt)
    found = _USER_LINE.search(history.group(1) if history else "")
    return " ".join(found.group(1).split()) if found else ""


def _last_question(prompt: str) -> str:
    history = _HISTORY.search(prompt)
    found = _USER_LINE.findall(history.group(1) if history else "")
    return " ".join(found[-1].split()) if found else ""


def _title(question: str) -> str:
    title = " ".join(re.sub(r"[^\w\s'-]", " ", question).split()[:_TITLE_WORDS])
    return title[:1].upper() + title[1:] if title else "Documentation question"


def task_reply(prompt: str) -> str | None:
    """The reply to an Open WebUI task prompt (None: ``prompt`` is not one)."""
    if not _TASK.match(prompt):
        return None
    # What the task wants is named by the JSON key its output format shows.
    if '"title"' in prompt:
        return json.dumps({"title": _title(_first_question(prompt))}, ensure_ascii=False)
    if '"tags"' in prompt:
        return json.dumps({"tags": ["Documentation"]})
    if '"follow_ups"' in prompt:
        return json.dumps({"follow_ups": []})
    if '"queries"' in prompt:
        question = _last_question(prompt)
        return json.dumps({"queries": [question] if question else []}, ensure_ascii=False)
    if '"text"' in prompt:
        return json.dumps({"text": ""})
    return "📄" if "emoji" in prompt.lower() else ""
