"""The typed events an answer streams: status updates, text deltas and the final Answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from citewise.models import Answer


@dataclass(frozen=True)
class Status:
    """A progress update for the user ("Searching the docs: …"), not part of the answer."""

    text: str
    type: Literal["status"] = "status"


@dataclass(frozen=True)
class TextDelta:
    """The next piece of the answer text, in order; the pieces join into ``Answer.text``."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class Done:
    """The finished answer with its citations (computed from the final text) and hits."""

    answer: Answer
    type: Literal["done"] = "done"


Event = Status | TextDelta | Done
