"""Answer feedback: a reader's thumbs up or down (and a comment) on one answer, kept with
what the answer was, summed up per time window for the diagnostics page.

Each answer the server gives is remembered under its response id (the Responses ``resp_…``
or Chat Completions ``chatcmpl_…`` id) with its question's hash, knowledge base, workflow,
cited sections and grounding result; the question's text only when the operator enables it
(``CITEWISE_FEEDBACK_QUESTIONS=1``). A rating names the response id. Both live in
``{home}/feedback.json`` (:class:`~citewise.kb.jsonfile.BoundedJSONFile`): at most
:data:`MAX_ANSWERS` answers, :data:`MAX_RATINGS` ratings and :data:`MAX_BYTES` bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from citewise.config import ServiceSettings, Settings
from citewise.errors import CitewiseError
from citewise.kb.diagnostics import digest
from citewise.kb.jsonfile import BoundedJSONFile
from citewise.models import Answer

__all__ = [
    "FEEDBACK_FILE",
    "MAX_ANSWERS",
    "MAX_BYTES",
    "MAX_RATINGS",
    "RATINGS",
    "WINDOWS",
    "FeedbackError",
    "FeedbackStore",
]

FEEDBACK_FILE = "feedback.json"
MAX_ANSWERS = 300
MAX_RATINGS = 500
MAX_BYTES = 512 * 1024
MAX_COMMENT = 1000
MAX_SECTIONS = 8
RATINGS = ("up", "down")
WINDOWS: dict[str, float] = {"1h": 3600, "1d": 86400, "7d": 7 * 86400, "all": float("inf")}
WORST = 10
QUESTIONS_ENV = "CITEWISE_FEEDBACK_QUESTIONS"


class FeedbackError(CitewiseError):
    """A rating that cannot be kept; ``status`` is the HTTP status that says why."""

    def __init__(self, message: str, status: int = 400, code: str = "invalid_value") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _sections(answer: Answer) -> list[dict[str, str]]:
    """The sections an answer cites, each once, in order of first citation."""
    seen: dict[str, str] = {}
    for citation in answer.citations:
        seen.setdefault(citation.url, citation.title)
    return [{"url": url, "title": title} for url, title in list(seen.items())[:MAX_SECTIONS]]


def _grounding(answer: Answer) -> dict[str, Any] | None:
    report = answer.verification
    if report is None:
        return None
    return {
        "ok": report.ok,
        "unsupported": len(report.unsupported),
        "outside_links": len(report.outside_links),
        "unsupported_citations": sum(1 for c in report.citations if not c.supported),
        "problems": len(report.problems),
        "regenerated": report.regenerated,
    }


class FeedbackStore:
    """The answers and ratings of one home, persisted in ``path``.

    Args:
        path: the file (``{home}/feedback.json``).
        keep_questions: keep each answer's question text (default: ``CITEWISE_FEEDBACK_QUESTIONS``).
        clock: seconds since the epoch (tests pass their own).
    """

    _shared: ClassVar[dict[Path, FeedbackStore]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        path: Path,
        *,
        keep_questions: bool | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        if keep_questions is None:
            keep_questions = ServiceSettings.from_env().feedback_questions
        self.keep_questions = keep_questions
        self.clock = clock
        limits = {"answers": MAX_ANSWERS, "ratings": MAX_RATINGS}
        self._file = BoundedJSONFile(path, limits, MAX_BYTES)

    @classmethod
    def of(cls, settings: Settings) -> FeedbackStore:
        """The store of ``settings``' home, one object per process."""
        path = (settings.home.expanduser() / FEEDBACK_FILE).resolve()
        with cls._shared_lock:
            store = cls._shared.get(path)
            if store is None:
                store = cls._shared[path] = cls(path)
            return store

    # -- recording -------------------------------------------------------------------------

    def remember(
        self, response_id: str, answer: Answer, *, kb: str, workflow: str, question: str
    ) -> dict[str, Any]:
        """Keep what ``answer`` was, for a later rating of ``response_id``.

        Raises:
            OSError: the file could not be written.
        """
        entry: dict[str, Any] = {
            "response_id": response_id,
            "t": round(self.clock(), 3),
            "kb": kb,
            "workflow": workflow,
            "question_hash": digest(question.strip()),
            "kind": answer.kind,
            "sections": _sections(answer),
            "grounding": _grounding(answer),
        }
        if self.keep_questions:
            entry["question"] = question.strip()[:MAX_COMMENT]
        with self._file.locked():
            lists = self._file.read()
            lists["answers"].append(entry)
            self._file.write(lists)
        return entry

    def rate(
        self, response_id: str, rating: str, comment: str = "", *, kb: str | None = None
    ) -> dict[str, Any]:
        """Keep a reader's rating of the answer ``response_id``; a second rating of the same
        answer replaces the first (``replaced``: the rating it replaced, or None). ``kb``:
        only an answer of this knowledge base may be rated (a widget key's).

        Raises:
            FeedbackError: a rating other than up/down, a comment too long (400), an answer
                not kept (404), or one of another knowledge base (403).
        """
        if rating not in RATINGS:
            raise FeedbackError(f"rating must be 'up' or 'down', not {rating!r}")
        if len(comment) > MAX_COMMENT:
            raise FeedbackError(f"comment is {len(comment)} characters, at most {MAX_COMMENT}")
        with self._file.locked():
            lists = self._file.read()
            answer = next(
                (a for a in reversed(lists["answers"]) if a.get("response_id") == response_id),
                None,
            )
            if answer is None:
                raise FeedbackError(
                    f"no answer {response_id!r} to rate: give the id of a recent answer "
                    f"(the last {MAX_ANSWERS} are kept)",
                    404,
                    "not_found",
                )
            if kb is not None and answer.get("kb") != kb:
                raise FeedbackError(
                    f"answer {response_id!r} is not of knowledge base {kb!r}", 403, "forbidden"
                )
            entry = {
                "response_id": response_id,
                "t": round(self.clock(), 3),
                "kb": answer.get("kb"),
                "rating": rating,
                "comment": comment.strip(),
            }
            earlier = [r for r in lists["ratings"] if r.get("response_id") == response_id]
            ratings = [r for r in lists["ratings"] if r.get("response_id") != response_id]
            lists["ratings"] = [*ratings, entry]
            self._file.write(lists)
        replaced = earlier[-1].get("rating") if earlier else None
        return {**entry, "answer": answer, "replaced": replaced}

    # -- reading ---------------------------------------------------------------------------

    def ratings(self) -> list[dict[str, Any]]:
        """The kept ratings, oldest first, each with its answer (None once it is dropped)."""
        with self._file.locked():
            lists = self._file.read()
        answers = {a.get("response_id"): a for a in lists["answers"]}
        return [{**r, "answer": answers.get(r.get("response_id"))} for r in lists["ratings"]]

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """Per window (1h, 1d, 7d, all): ratings, ups, downs and the helpful rate (ups over
        ratings); then the worst-rated questions with the sections their answers cited."""
        now = self.clock() if now is None else now
        rated = self.ratings()
        windows = {}
        for name, seconds in WINDOWS.items():
            group = [r for r in rated if r.get("t", 0) >= now - seconds]
            windows[name] = _rates(group)
        return {
            "object": "feedback.summary",
            "ratings": len(rated),
            "limits": {"answers": MAX_ANSWERS, "ratings": MAX_RATINGS, "bytes": MAX_BYTES},
            "windows": windows,
            "worst": _worst(rated),
        }

    def export(self, now: float | None = None) -> dict[str, Any]:
        """The summary and the ratings behind it (with their answers)."""
        return {**self.summary(now), "data": self.ratings()}

    def clear(self) -> int:
        """Forget every answer and rating; how many ratings there were."""
        with self._file.locked():
            count = len(self._file.read()["ratings"])
            self._file.write({"answers": [], "ratings": []})
            return count


def _rates(group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    up = sum(1 for r in group if r.get("rating") == "up")
    down = sum(1 for r in group if r.get("rating") == "down")
    total = up + down
    return {
        "ratings": total,
        "up": up,
        "down": down,
        "helpful_rate": round(up / total, 4) if total else None,
    }


def _worst(rated: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The questions rated down most (then helped least), with their answers' sections."""
    by_question: dict[tuple[str, str], dict[str, Any]] = {}
    for rating in rated:
        answer = rating.get("answer") or {}
        key = (str(rating.get("kb")), str(answer.get("question_hash", rating["response_id"])))
        row = by_question.setdefault(key, {
            "kb": key[0], "question_hash": key[1], "up": 0, "down": 0, "sections": [],
            "comments": [], "last": 0.0,
        })  # fmt: skip
        row[str(rating.get("rating"))] += 1
        row["last"] = max(row["last"], float(rating.get("t", 0)))
        if answer.get("question"):
            row["question"] = answer["question"]
        if answer.get("grounding") is not None:
            row["grounding"] = answer["grounding"]
        for section in answer.get("sections") or []:
            if section not in row["sections"]:
                row["sections"].append(section)
        if rating.get("comment"):
            row["comments"] = [*row["comments"], rating["comment"]][-3:]
    rows = [row for row in by_question.values() if row["down"]]
    for row in rows:
        row["helpful_rate"] = round(row["up"] / (row["up"] + row["down"]), 4)
        row["sections"] = row["sections"][:MAX_SECTIONS]
    rows.sort(key=lambda r: (-r["down"], r["helpful_rate"], -r["last"]))
    return rows[:WORST]
