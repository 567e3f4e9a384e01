"""Answer events as OpenAI wire objects: Responses API events and Chat Completions chunks.

Responses (``POST /v1/responses``), for a question whose workflow reports two statuses::

    response.created, response.in_progress
    the statuses, as one ``reasoning`` item whose summary parts they are (what reasoning
    models stream, and what clients show apart from the answer, never as ``output_text``):
        output_item.added, then per status: reasoning_summary_part.added,
        reasoning_summary_text.delta, reasoning_summary_text.done,
        reasoning_summary_part.done; output_item.done before the answer starts
    the answer (one message, ``phase: "final_answer"``):
        output_item.added, content_part.added, output_text.delta × N,
        output_text.annotation.added × citations, output_text.done, content_part.done,
        output_item.done
    with ``include: ["file_search_call.results"]``, the searches made and the sections found
    (one ``file_search_call`` item, the hits as its ``results``):
        output_item.added, output_item.done
    response.completed  (or response.failed with an OpenAI error)

Citation offsets (``start_index``/``end_index``, both APIs) count characters as Python does:
Unicode code points of the answer text, the OpenAI convention. A client in a language whose
strings are UTF-16 (JavaScript, Java, C#) converts them: an emoji is one code point but two
UTF-16 units (the chat page's ``app.js`` shows how).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from typing import Any

from citewise.models import Answer, Citation, Hit

Payload = dict[str, Any]


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


VERIFICATION_KEY = "citewise_verification"
"""The Responses ``metadata`` key of the grounding check's report (a JSON string: metadata
values are strings)."""


def grounding(answer: Answer) -> Payload | None:
    """The grounding check's report of an answer, with the spans of the citations citewise
    attributed itself (None when ``verify`` is ``off``)."""
    if answer.verification is None:
        return None
    return answer.verification.as_json()


def url_citation(citation: Citation) -> Payload:
    """A citation as a Responses ``url_citation`` annotation."""
    return {
        "type": "url_citation",
        "url": citation.url,
        "title": citation.title,
        "start_index": citation.start_index,
        "end_index": citation.end_index,
    }


def search_result(hit: Hit) -> Payload:
    """A hit as a ``file_search_call`` result: the chunk is the file, its URL the name."""
    chunk = hit.chunk
    return {
        "file_id": chunk.chunk_id,
        "filename": chunk.url,
        "score": round(hit.score, 6),
        "text": chunk.text,
        "attributes": {
            "url": chunk.url,
            "title": chunk.title,
            "heading_path": " › ".join(chunk.heading_path),
            "doc_id": chunk.doc_id,
            "page": chunk.page,
            "rankers": " ".join(hit.rankers),
            # From a search of several knowledge bases: which library and version.
            **({"library": hit.library, "version": hit.library_version} if hit.library else {}),
        },
    }


def sse(payload: Payload, *, named: bool = True) -> str:
    """One server-sent event; Responses events also carry their type as the event name."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"event: {payload['type']}\ndata: {data}\n\n" if named else f"data: {data}\n\n"


class ResponseEvents:
    """Builds the events (and the final ``Response``) of one Responses API answer."""

    def __init__(
        self, model: str, metadata: dict[str, str] | None, *, with_results: bool = False
    ) -> None:
        self.model = model
        self.with_results = with_results
        self.metadata = metadata or {}
        self.id = _id("resp")
        self.created_at = int(time.time())
        self.output: list[Payload] = []
        self._sequence = 0
        self._answer: Payload | None = None  # the open final_answer item
        self._reasoning: Payload | None = None  # the open reasoning item of the statuses
        self._streamed = ""
        self.usage: Payload | None = None  # set by ``done``: the Responses shape of usage

    def _event(self, type: str, **fields: Any) -> Payload:
        event = {"type": type, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return event

    def response(self, status: str, error: Payload | None = None) -> Payload:
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "model": self.model,
            "status": status,
            "output": self.output,
            "error": error,
            "metadata": self.metadata,
            "usage": self.usage,
            "parallel_tool_calls": False,
            "tool_choice": "none",
            "tools": [],
            "completed_at": int(time.time()) if status == "completed" else None,
        }

    def start(self) -> list[Payload]:
        return [
            self._event("response.created", response=self.response("in_progress")),
            self._event("response.in_progress", response=self.response("in_progress")),
        ]

    def _open(self, phase: str) -> tuple[Payload, list[Payload]]:
        item: Payload = {
            "id": _id("msg"),
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "phase": phase,
            "content": [],
        }
        index = len(self.output)
        self.output.append(item)
        where = {"output_index": index, "item_id": item["id"], "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return item, [
            self._event("response.output_item.added", output_index=index, item=dict(item)),
            self._event("response.content_part.added", part=part, **where),
        ]

    def _close(self, item: Payload, text: str, annotations: list[Payload]) -> list[Payload]:
        index = self.output.index(item)
        where = {"output_index": index, "item_id": item["id"], "content_index": 0}
        part = {"type": "output_text", "text": text, "annotations": annotations, "logprobs": []}
        item.update(status="completed", content=[part])
        return [
            self._event("response.output_text.done", text=text, logprobs=[], **where),
            self._event("response.content_part.done", part=part, **where),
            self._event("response.output_item.done", output_index=index, item=item),
        ]

    def _delta(self, item: Payload, text: str) -> Payload:
        index = self.output.index(item)
        return self._event(
            "response.output_text.delta",
            output_index=index,
            item_id=item["id"],
            content_index=0,
            delta=text,
            logprobs=[],
        )

    def status(self, text: str) -> list[Payload]:
        """A status update as one more summary part of the statuses' reasoning item: never
        ``output_text``, so a client printing the answer's deltas prints only the answer,
        and the streamed Response's ``output_text`` is the non-streamed one."""
        if self._answer is not None:
            # Both workflows report nothing once the answer streams; interleaving items
            # would confuse clients that render output in order.
            return []
        events: list[Payload] = []
        if self._reasoning is None:
            self._reasoning = {"id": _id("rs"), "type": "reasoning", "summary": [],
                               "status": "in_progress"}  # fmt: skip
            self.output.append(self._reasoning)
            index = len(self.output) - 1
            events.append(self._event("response.output_item.added", output_index=index,
                                      item=dict(self._reasoning, summary=[])))  # fmt: skip
        item = self._reasoning
        summary: list[Payload] = item["summary"]
        where = {"output_index": self.output.index(item), "item_id": item["id"],
                 "summary_index": len(summary)}  # fmt: skip
        part = {"type": "summary_text", "text": text}
        summary.append(part)
        return [
            *events,
            self._event("response.reasoning_summary_part.added",
                        part={"type": "summary_text", "text": ""}, **where),
            self._event("response.reasoning_summary_text.delta", delta=text, **where),
            self._event("response.reasoning_summary_text.done", text=text, **where),
            self._event("response.reasoning_summary_part.done", part=part, **where),
        ]  # fmt: skip

    def _end_reasoning(self) -> list[Payload]:
        item, self._reasoning = self._reasoning, None
        if item is None:
            return []
        item["status"] = "completed"
        index = self.output.index(item)
        return [self._event("response.output_item.done", output_index=index, item=item)]

    def delta(self, text: str) -> list[Payload]:
        events: list[Payload] = []
        if self._answer is None:
            events = self._end_reasoning()
            self._answer, opened = self._open("final_answer")
            events += opened
        self._streamed += text
        return [*events, self._delta(self._answer, text)]

    def done(self, answer: Answer, usage: Payload | None = None) -> list[Payload]:
        """The answer's annotations, its done events and ``response.completed`` (with the
        Chat Completions ``usage`` given, in the Responses shape)."""
        if usage is not None:
            self.usage = {
                "input_tokens": usage["prompt_tokens"],
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": usage["completion_tokens"],
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage["total_tokens"],
            }
        if (report := grounding(answer)) is not None:
            self.metadata = {**self.metadata, VERIFICATION_KEY: json.dumps(report)}
        events: list[Payload] = []
        rest = answer.text[len(self._streamed) :]
        if self._answer is None or (rest and answer.text.startswith(self._streamed)):
            events += self.delta(rest)
        assert self._answer is not None
        item = self._answer
        annotations = [url_citation(citation) for citation in answer.citations]
        for number, annotation in enumerate(annotations):
            events.append(
                self._event(
                    "response.output_text.annotation.added",
                    output_index=self.output.index(item),
                    item_id=item["id"],
                    content_index=0,
                    annotation_index=number,
                    annotation=annotation,
                )
            )
        events += self._close(item, answer.text, annotations)
        if self.with_results:
            events += self._search_results(answer)
        events.append(self._event("response.completed", response=self.response("completed")))
        return events

    def _search_results(self, answer: Answer) -> list[Payload]:
        """The searches as one completed ``file_search_call`` item with the hits as results."""
        item: Payload = {
            "id": _id("fs"),
            "type": "file_search_call",
            "status": "completed",
            "queries": list(answer.queries),
            "results": [search_result(hit) for hit in answer.hits],
        }
        index = len(self.output)
        self.output.append(item)
        return [
            self._event("response.output_item.added", output_index=index, item=item),
            self._event("response.output_item.done", output_index=index, item=item),
        ]

    def failed(self, message: str, code: str = "server_error") -> list[Payload]:
        error = {"code": code, "message": message}
        closed = self._end_reasoning()
        return [*closed, self._event("response.failed", response=self.response("failed", error))]

    def final(self, answer: Answer, usage: Payload | None = None) -> Payload:
        """The non-streaming response: the answer message with its annotations only."""
        self.output = []
        self._answer = self._reasoning = None
        self._streamed = ""
        self.done(answer, usage)
        return self.response("completed")


class ChatChunks:
    """Builds the chunks (or the whole completion) of one Chat Completions answer.

    A streamed answer is: a first chunk with the role; with ``show_status``, each status as a
    ``reasoning_content`` delta (the field reasoning models use, which clients such as Open
    WebUI show folded away and never send back as history); the answer's ``content`` deltas;
    a last chunk with ``finish_reason`` and the annotations; with
    ``stream_options.include_usage``, a chunk with no choices and the ``usage``.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = _id("chatcmpl")
        self.created = int(time.time())

    def _object(self, kind: str, choices: list[Payload]) -> Payload:
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def chunk(self, delta: Payload, finish_reason: str | None = None) -> Payload:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return self._object("chat.completion.chunk", [choice])

    def status(self, text: str) -> Payload:
        """A status update as a ``reasoning_content`` delta (one line each)."""
        return self.chunk({"reasoning_content": f"{text}\n"})

    def usage_chunk(self, usage: Payload) -> Payload:
        """The last chunk of a stream that asked for ``include_usage``."""
        return {**self._object("chat.completion.chunk", []), "usage": usage}

    def completion(self, answer: Answer, usage: Payload | None = None) -> Payload:
        message = {
            "role": "assistant",
            "content": answer.text,
            "refusal": None,
            "annotations": chat_annotations(answer),
        }
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        completion = {**self._object("chat.completion", [choice]), "usage": usage or no_usage()}
        return {**completion, **citewise_field(answer)}


def citewise_field(answer: Answer) -> Payload:
    """The ``citewise`` field of a Chat Completions answer (its last chunk when streamed):
    the grounding check's report; nothing when ``verify`` is ``off``."""
    report = grounding(answer)
    return {} if report is None else {"citewise": {"verification": report}}


def no_usage() -> Payload:
    """The usage of an answer no model wrote (extractive, or an Open WebUI task reply)."""
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def chat_annotations(answer: Answer) -> list[Payload]:
    """Chat Completions' ``url_citation`` annotations (the span nested under the type)."""
    return [
        {
            "type": "url_citation",
            "url_citation": {k: v for k, v in asdict(c).items() if k not in ("type", "attributed")},
        }
        for c in answer.citations
    ]
