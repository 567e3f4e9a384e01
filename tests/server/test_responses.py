"""POST /v1/responses through the official openai SDK, against a real server."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai import OpenAI
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryPartDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_output_text_annotation_added_event import (
    ResponseOutputTextAnnotationAddedEvent,
)

from citewise.testing import ScriptedChatModel

from .conftest import settings_metadata

QUESTION = "How do I add API key authentication?"
REASONING_EVENTS = [
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
]


def stream(sdk: OpenAI, question: Any = QUESTION, **kwargs: Any) -> list[ResponseStreamEvent]:
    with sdk.responses.create(
        model=kwargs.pop("model", "citewise-rag"), input=question, stream=True, **kwargs
    ) as events:
        return list(events)


def final_message(events: list[ResponseStreamEvent]) -> ResponseOutputMessage:
    completed = events[-1]
    assert isinstance(completed, ResponseCompletedEvent)
    (final,) = [
        item
        for item in completed.response.output
        if isinstance(item, ResponseOutputMessage) and item.phase == "final_answer"
    ]
    return final


def test_streamed_events_are_sdk_types_in_the_documented_order(scripted: OpenAI) -> None:
    events = stream(scripted)

    assert isinstance(events[0], ResponseCreatedEvent)
    assert isinstance(events[1], ResponseInProgressEvent)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    types = [e.type for e in events]
    # The statuses are the summary parts of one reasoning item, closed before the answer.
    statuses = [
        "Understanding the question",
        f"Searching the docs: {QUESTION}",
        "Writing the answer",
    ]
    added = events[2]
    assert isinstance(added, ResponseOutputItemAddedEvent) and added.output_index == 0
    assert isinstance(added.item, ResponseReasoningItem) and added.item.summary == []
    for number, status in enumerate(statuses):
        block = events[3 + 4 * number : 7 + 4 * number]
        assert [e.type for e in block] == REASONING_EVENTS
        part, delta, done, part_done = block
        assert isinstance(delta, ResponseReasoningSummaryTextDeltaEvent)
        assert delta.delta == status and delta.summary_index == number
        assert delta.item_id == added.item.id
        assert isinstance(part_done, ResponseReasoningSummaryPartDoneEvent)
        assert part_done.part.text == status
    item_done = events[3 + 4 * len(statuses)]
    assert isinstance(item_done, ResponseOutputItemDoneEvent)
    assert isinstance(item_done.item, ResponseReasoningItem)
    assert [s.text for s in item_done.item.summary] == statuses
    # No status is output_text: only the answer's message has text deltas.
    assert all(e.item_id != added.item.id for e in events if isinstance(e, ResponseTextDeltaEvent))
    answer_start = 3 + 4 * 3 + 1
    added = events[answer_start]
    assert isinstance(added, ResponseOutputItemAddedEvent)
    assert isinstance(added.item, ResponseOutputMessage) and added.item.phase == "final_answer"
    assert isinstance(events[answer_start + 1], ResponseContentPartAddedEvent)
    tail = types[answer_start + 2 :]
    deltas = [e for e in events[answer_start + 2 :] if isinstance(e, ResponseTextDeltaEvent)]
    assert len(deltas) > 3  # the answer streams in pieces, not as one block
    assert tail[-5:] == [
        "response.output_text.annotation.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert all(d.item_id == added.item.id for d in deltas)
    text_done = events[-4]
    assert isinstance(text_done, ResponseTextDoneEvent)
    assert text_done.text == "".join(d.delta for d in deltas)
    assert isinstance(events[-3], ResponseContentPartDoneEvent)


def test_annotations_point_at_the_cited_text(scripted: OpenAI) -> None:
    events = stream(scripted)
    added = [e for e in events if isinstance(e, ResponseOutputTextAnnotationAddedEvent)]
    final = final_message(events)
    part = final.content[0]
    assert isinstance(part, ResponseOutputText)
    assert len(added) == len(part.annotations) == 1
    annotation = part.annotations[0]
    assert annotation.type == "url_citation"
    cited = part.text[annotation.start_index : annotation.end_index]
    assert cited == f"[{annotation.title}]({annotation.url})"
    assert annotation.url.startswith(
        "https://ilkersigirci.github.io/langgraph-openai-serve/0.12.0/"
    )
    assert added[0].annotation is not None and added[0].annotation.url == annotation.url  # type: ignore[union-attr]
    assert added[0].annotation_index == 0 and added[0].item_id == final.id


def test_extractive_answer_without_a_chat_model_has_annotations(extractive: OpenAI) -> None:
    events = stream(extractive)
    statuses = [e.part.text for e in events if isinstance(e, ResponseReasoningSummaryPartDoneEvent)]
    assert statuses == [f"Searching the docs: {QUESTION}"]
    part = final_message(events).content[0]
    assert isinstance(part, ResponseOutputText)
    assert part.text.startswith("*Extractive answer")
    assert part.annotations
    for annotation in part.annotations:
        assert annotation.type == "url_citation"
        assert annotation.url in part.text[annotation.start_index : annotation.end_index]
    assert any("authentication" in a.url for a in part.annotations)  # type: ignore[union-attr]


def test_non_streaming_returns_the_answer_message_with_annotations(scripted: OpenAI) -> None:
    response = scripted.responses.create(model="citewise-rag", input=QUESTION)
    assert response.status == "completed"
    (message,) = response.output
    assert isinstance(message, ResponseOutputMessage) and message.phase == "final_answer"
    assert response.output_text.startswith("Use the middleware described in [")
    (annotation,) = message.content[0].annotations  # type: ignore[union-attr]
    assert response.output_text[annotation.start_index : annotation.end_index].endswith(  # type: ignore[union-attr]
        f"({annotation.url})"  # type: ignore[union-attr]
    )


def test_a_streamed_final_response_has_the_output_text_of_a_non_streamed_one(
    scripted: OpenAI,
) -> None:
    # What the README's loop and the SDK's helper give: the answer, no status glued to it.
    with scripted.responses.stream(model="citewise-rag", input=QUESTION) as events:
        printed = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        final = events.get_final_response()
    plain = scripted.responses.create(model="citewise-rag", input=QUESTION)
    assert final.output_text == plain.output_text == printed
    assert plain.output_text.startswith("Use the middleware described in [")
    # The statuses are there for clients that show reasoning, and sent back they are dropped.
    (reasoning,) = [item for item in final.output if isinstance(item, ResponseReasoningItem)]
    assert reasoning.summary[0].text == "Understanding the question"
    again = [reasoning.model_dump(exclude_none=True), {"role": "user", "content": QUESTION}]
    assert scripted.responses.create(model="citewise-rag", input=again).output_text


def test_history_comes_from_input_items_and_commentary_is_dropped(
    scripted: OpenAI, scripted_model: ScriptedChatModel
) -> None:
    before = len(scripted_model.calls)
    history: Any = [
        {"role": "user", "content": "Tell me about LGOS."},
        {
            "type": "message",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "Searching the docs: LGOS"}],
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "LGOS serves graphs."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "And how do I secure it?"}]},
    ]
    scripted.responses.create(model="citewise-rag", input=history, instructions="Answer briefly.")
    plan = scripted_model.calls[before]
    assert plan.kind == "Plan"
    texts = [m.text for m in plan.messages]
    assert "Tell me about LGOS." in texts and "LGOS serves graphs." in texts
    assert "Searching the docs: LGOS" not in "\n".join(texts)
    assert plan.last == "And how do I secure it?"


def test_scope_top_k_and_search_type_settings_reach_the_search(
    extractive: OpenAI, lgos_scopes: tuple[str, ...]
) -> None:
    scope = next(s for s in lgos_scopes if s != "all")
    metadata = settings_metadata(scope=scope, top_k=2, search_type="vector")
    response = extractive.responses.create(model="citewise-rag", input=QUESTION, metadata=metadata)
    annotations = response.output[0].content[0].annotations  # type: ignore[union-attr]
    assert 1 <= len({a.url for a in annotations}) <= 2  # type: ignore[union-attr]
    events = stream(extractive, metadata=metadata)
    status = events[4]
    assert isinstance(status, ResponseReasoningSummaryTextDeltaEvent)
    assert status.delta == f"Searching the {scope} docs: {QUESTION}"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"scope": "no-such-part"}, "scope"),
        ({"kb": "missing"}, "kb"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": "many"}, "top_k"),
        ({"search_type": "semantic"}, "search_type"),
        ({"context_window": 99}, "context_window"),
        ({"k": 2}, "k"),
        ({"bm25": False}, "bm25"),
        ({"mode": "keyword"}, "mode"),
        ({"rerank": "nope"}, "rerank"),
        ({"query_rewrite": "nope"}, "query_rewrite"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_settings_are_400_naming_the_field(
    extractive: OpenAI, values: dict[str, Any], field: str
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        extractive.responses.create(
            model="citewise-rag", input=QUESTION, metadata=settings_metadata(**values), stream=True
        )
    error = raised.value
    assert error.status_code == 400
    assert error.param == f"metadata.citewise_settings.{field}"
    assert repr(field) in error.message


def test_settings_that_are_not_json_are_400(extractive: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        extractive.responses.create(
            model="citewise-rag", input=QUESTION, metadata={"citewise_settings": "{scope"}
        )
    assert raised.value.param == "metadata.citewise_settings"


def test_previous_response_id_is_refused_the_server_keeps_no_state(extractive: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        extractive.responses.create(
            model="citewise-rag", input=QUESTION, previous_response_id="resp_1"
        )
    assert raised.value.param == "previous_response_id"
