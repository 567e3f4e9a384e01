"""``response_format`` (Chat Completions) and ``text.format`` (Responses) through the official
openai SDK: the cited answer reshaped into the client's schema, streamed or not, its sources
kept as ``url_citation`` annotations; a 400 naming the parameter without a chat model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai import OpenAI
from pydantic import BaseModel

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.kb.structured import FORMAT_TAG
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import OpenAIStub, ScriptedCall, ScriptedChatModel, StubReply, script

from .conftest import SECTION, client

SITE = "https://docs.example/"
DOCS = {
    "auth.md": "# Authentication\n\n## API keys\n\nSet `NOTES_API_KEYS` to a comma-separated "
    "list of keys; every request then needs `Authorization: Bearer KEY`.\n",
    "deploy.md": "# Deploy\n\n## Docker\n\nRun `docker compose up` to start the server.\n",
}
QUESTION = [{"role": "user", "content": "How do I require API keys?"}]


class Reply(BaseModel):
    answer: str
    sources: list[str]


def _answer_and_json(call: ScriptedCall) -> str:
    """The answer call cites the first section of its prompt; the format call reshapes the
    answer it is given (with a field the schema does not have, which must not reach the
    client)."""
    if FORMAT_TAG in call.tags:
        url = call.last.rsplit(": ", 1)[-1].strip()
        return json.dumps({"answer": "Set NOTES_API_KEYS.", "sources": [url], "extra": 1})
    found = SECTION.search(call.messages[-1].text)
    assert found is not None
    url, title = found.groups()
    return f"Set `NOTES_API_KEYS` to your keys, as [{title}]({url}) says."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("structured")
    folder = root / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase("notes", settings=Settings(home=root / "home"))
    kb.index_folder(folder, site_url=SITE, version="")
    return root / "home"


@pytest.fixture(scope="module")
def model() -> ScriptedChatModel:
    return ScriptedChatModel(reply=script(answer=_answer_and_json))


@pytest.fixture(scope="module")
def sdk(home: Path, model: ScriptedChatModel) -> Iterator[OpenAI]:
    app = create_app(Settings(home=home), ServerOptions(kb="notes"), model_factory=lambda: model)
    with running(app) as url, client(url) as sdk:
        yield sdk


def _format_calls(model: ScriptedChatModel) -> list[ScriptedCall]:
    return [c for c in model.calls if FORMAT_TAG in c.tags]


def test_chat_parse_gets_the_schema_and_the_sources(sdk: OpenAI, model: ScriptedChatModel) -> None:
    before = len(_format_calls(model))
    completion = sdk.chat.completions.parse(
        model="citewise-rag",
        messages=QUESTION,
        response_format=Reply,  # type: ignore[arg-type]
    )
    message = completion.choices[0].message
    assert message.parsed == Reply(answer="Set NOTES_API_KEYS.", sources=[f"{SITE}auth/#api-keys"])
    assert set(json.loads(message.content or "")) == {"answer", "sources"}  # exactly the schema
    (annotation,) = message.annotations or []
    url = annotation.url_citation.url
    assert url == f"{SITE}auth/#api-keys"
    cited = annotation.url_citation
    assert (message.content or "")[cited.start_index : cited.end_index] == url
    # One more call, after the answer: the Markdown answer and the schema in its prompt.
    (call,) = _format_calls(model)[before:]
    assert "Set `NOTES_API_KEYS` to your keys" in call.last
    assert '"sources"' in call.system and "JSON schema" in call.system
    # The grounding report is the Markdown answer's check.
    assert completion.model_extra and completion.model_extra["citewise"]["verification"]["ok"]


def test_chat_stream_parses_the_same(sdk: OpenAI) -> None:
    with sdk.chat.completions.stream(
        model="citewise-rag",
        messages=QUESTION,
        response_format=Reply,  # type: ignore[arg-type]
    ) as stream:
        contents = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.parsed == Reply(answer="Set NOTES_API_KEYS.", sources=[f"{SITE}auth/#api-keys"])
    # Only the JSON is content: the Markdown answer is not streamed to the client.
    assert "".join(contents) == message.content
    assert [a.url_citation.url for a in message.annotations or []] == [f"{SITE}auth/#api-keys"]


def test_chat_json_object(sdk: OpenAI) -> None:
    completion = sdk.chat.completions.create(
        model="citewise-rag", messages=QUESTION,  # type: ignore[arg-type]
        response_format={"type": "json_object"},
    )  # fmt: skip
    value = json.loads(completion.choices[0].message.content or "")
    assert value["answer"] == "Set NOTES_API_KEYS." and value["extra"] == 1  # no schema: kept


def test_responses_parse_and_stream_get_the_schema(sdk: OpenAI) -> None:
    response = sdk.responses.parse(
        model="citewise-rag", input="How do I require API keys?", text_format=Reply
    )
    expected = Reply(answer="Set NOTES_API_KEYS.", sources=[f"{SITE}auth/#api-keys"])
    assert response.output_parsed == expected
    (message,) = [item for item in response.output if item.type == "message"]
    (annotation,) = message.content[0].annotations  # type: ignore[union-attr]
    assert annotation.url == f"{SITE}auth/#api-keys"  # type: ignore[union-attr]
    assert "citewise_verification" in (response.metadata or {})

    with sdk.responses.stream(
        model="citewise-rag", input="How do I require API keys?", text_format=Reply
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.output_parsed == expected
    assert "".join(deltas) == final.output_text == response.output_text


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"response_format": {"type": "xml"}}, "response_format"),
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
        ({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}},
         "response_format.json_schema.name"),
    ],
)  # fmt: skip
def test_a_format_citewise_does_not_write_is_a_400_naming_it(
    sdk: OpenAI, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(model="citewise-rag", messages=QUESTION, **extra)  # type: ignore[call-overload]
    assert refused.value.param == param


def test_without_a_chat_model_the_formats_are_a_400_naming_the_parameter(home: Path) -> None:
    app = create_app(Settings(home=home), ServerOptions(kb="notes"), model_factory=lambda: None)
    with running(app) as url, client(url) as sdk:
        with pytest.raises(openai.BadRequestError) as chat:
            sdk.chat.completions.parse(
                model="citewise-rag",
                messages=QUESTION,
                response_format=Reply,  # type: ignore[arg-type]
            )
        with pytest.raises(openai.BadRequestError) as responses:
            sdk.responses.parse(model="citewise-rag", input="API keys?", text_format=Reply)
        plain = sdk.chat.completions.create(model="citewise-rag", messages=QUESTION)  # type: ignore[arg-type]
    assert chat.value.param == "response_format" and "chat model" in chat.value.message
    assert responses.value.param == "text.format"
    assert plain.choices[0].message.content  # an extractive answer still works


# --- a chat model behind a real OpenAI-compatible HTTP endpoint -------------------------------


def _endpoint(body: dict[str, Any]) -> StubReply:
    """Plans by tool call, answers citing the prompt's first section, writes JSON when asked
    for a format; the ``no-schema`` model refuses json_schema as some gateways do."""
    if body.get("tools"):
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": ["API keys"]}))
    fmt = body.get("response_format")
    if fmt is not None:
        if fmt["type"] == "json_schema" and body["model"] == "no-schema":
            return StubReply(status=400, content="response_format json_schema is not supported")
        return StubReply(content=json.dumps({"answer": "Set NOTES_API_KEYS.",
                                             "sources": [f"{SITE}auth/#api-keys"]}))  # fmt: skip
    found = SECTION.search(body["messages"][-1]["content"])
    assert found is not None
    url, title = found.groups()
    return StubReply(content=f"Set `NOTES_API_KEYS`, as [{title}]({url}) says.")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("endpoint_model", ["schema", "no-schema"])
def test_the_endpoint_gets_the_format_or_json_mode_with_the_schema(
    home: Path, endpoint_model: str, stream: bool
) -> None:
    with OpenAIStub(_endpoint) as stub:
        settings = Settings(home=home, llm_base_url=stub.base_url, llm_model=endpoint_model)
        with running(create_app(settings, ServerOptions(kb="notes"))) as url, client(url) as sdk:
            if stream:
                with sdk.chat.completions.stream(
                    model="citewise-rag",
                    messages=QUESTION,
                    response_format=Reply,  # type: ignore[arg-type]
                ) as events:
                    completion: Any = events.get_final_completion()
            else:
                completion = sdk.chat.completions.parse(
                    model="citewise-rag",
                    messages=QUESTION,
                    response_format=Reply,  # type: ignore[arg-type]
                )
    parsed = completion.choices[0].message.parsed
    assert parsed == Reply(answer="Set NOTES_API_KEYS.", sources=[f"{SITE}auth/#api-keys"])
    formats = [r["response_format"] for r in stub.requests if "response_format" in r]
    sent = Reply.model_json_schema()
    if endpoint_model == "schema":
        (given,) = formats  # the client's response_format, as the client sent it
        assert given["type"] == "json_schema" and given["json_schema"]["name"] == "Reply"
        assert given["json_schema"]["schema"]["properties"] == sent["properties"]
    else:
        # Refused once (remembered for the process), then JSON mode with the schema in the prompt.
        assert [f["type"] for f in formats] in (["json_schema", "json_object"], ["json_object"])
        last = next(r for r in reversed(stub.requests) if "response_format" in r)
        assert '"sources"' in last["messages"][0]["content"]
