"""Feedback routes: ``POST /v1/feedback`` rates an answer (up/down, a comment), ``GET
/v1/feedback`` lists the ratings with their summary; answers are remembered as they finish.

One route for both APIs, by ``response_id`` (a Responses ``resp_…`` or a Chat Completions
``chatcmpl_…`` id): citewise keeps no response objects to hang a ``…/{id}/feedback`` on.
Each rating also counts into ``citewise_feedback_total{kb,rating}`` (once per answer and
rating: a comment sent after the thumb, or the same thumb again, does not count twice).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from fastapi import APIRouter, Depends, FastAPI, Request
from prometheus_client import Counter
from pydantic import ConfigDict, Field

from citewise.config import Settings
from citewise.kb.feedback import MAX_COMMENT, FeedbackError, FeedbackStore
from citewise.models import Answer
from citewise.server.auth import require_api_key
from citewise.server.errors import APIError, storage_full
from citewise.server.json_types import JsonTyped
from citewise.server.metrics import Metrics

__all__ = ["FeedbackRequest", "install", "remember_answer", "store_of"]

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1", tags=["feedback"], dependencies=[Depends(require_api_key)])


class FeedbackRequest(JsonTyped):
    """``POST /v1/feedback``: which answer, and what the reader thought of it."""

    model_config = ConfigDict(extra="forbid")

    response_id: str = Field(min_length=1, max_length=200)
    rating: Literal["up", "down"] = Field(description="up (helpful) or down (not helpful)")
    comment: str = Field("", max_length=MAX_COMMENT)


def store_of(request: Request) -> FeedbackStore:
    store = request.app.state.feedback
    assert isinstance(store, FeedbackStore)
    return store


def install(app: FastAPI, settings: Settings, metrics: Metrics) -> None:
    """Keep ``settings``' home's feedback for ``app``, count it, and serve its routes."""
    app.state.feedback = FeedbackStore.of(settings)
    app.state.feedback_total = Counter(
        "citewise_feedback",
        "Readers' ratings of answers by knowledge base and rating (up, down)",
        ["kb", "rating"],
        registry=metrics.registry,
    )
    app.include_router(router)


def remember_answer(
    request: Request, response_id: str, answer: Answer, *, kb: str, workflow: str, question: str
) -> None:
    """Keep what ``answer`` was for a later rating (blocking; a write that fails is logged:
    feedback lost, never the answer)."""
    store = getattr(request.app.state, "feedback", None)
    if not isinstance(store, FeedbackStore):
        return
    try:
        store.remember(response_id, answer, kb=kb, workflow=workflow, question=question)
    except OSError as error:
        log.warning("answer not kept for feedback (%s): %s", store.path, error.strerror)


@router.post("/feedback")
async def rate(body: FeedbackRequest, request: Request) -> dict[str, Any]:
    """Rate an answer given by this server: ``up`` or ``down`` and an optional comment (a
    second rating of the same answer replaces the first)."""
    widget_kb = getattr(request.state, "widget_kb", None)
    try:
        kept = await asyncio.to_thread(
            store_of(request).rate, body.response_id, body.rating, body.comment, kb=widget_kb
        )
    except FeedbackError as error:
        param = "response_id" if error.status in (403, 404) else "rating"
        if body.rating in ("up", "down") and error.status == 400:
            param = "comment"
        raise APIError(error.status, str(error), param=param, code=error.code) from None
    except OSError as error:
        raise storage_full(error) from None
    counter: Counter = request.app.state.feedback_total
    metrics: Metrics = request.app.state.metrics
    if kept.pop("replaced") != kept["rating"]:  # a comment added to a rating is not another
        counter.labels(metrics.kb(str(kept["kb"])), kept["rating"]).inc()
    return {"object": "feedback", **{k: v for k, v in kept.items() if k != "answer"}}


@router.get("/feedback")
async def list_feedback(request: Request) -> dict[str, Any]:
    """The ratings kept (oldest first, each with its answer) and their summary: the helpful
    rate per window and the worst-rated questions."""
    payload = await asyncio.to_thread(store_of(request).export)
    return {**payload, "object": "list"}
