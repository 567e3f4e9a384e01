"""The local model: llama.cpp's chat API driven through a fake, and GGUF reassembly from parts."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from citewise.config import Settings
from citewise.errors import ConfigurationError, ModelError
from citewise.graph.prompts import Plan
from citewise.llamacpp import LlamaCppChatModel, PackagedGGUF, find_gguf, reassemble_gguf
from citewise.llm import astructured, at_temperature_zero


class FakeLlama:
    """Answers like ``llama_cpp.Llama.create_chat_completion`` and records the requests."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []

    def create_chat_completion(self, **request: Any) -> Any:
        self.requests.append(request)
        if request.get("stream"):
            return self._chunks()
        return {"choices": [{"message": {"role": "assistant", "content": self.reply}}]}

    def _chunks(self) -> Iterator[dict[str, Any]]:
        yield {"choices": [{"delta": {"role": "assistant"}}]}
        for word in self.reply.split(" "):
            yield {"choices": [{"delta": {"content": word + " "}}]}


def test_streams_the_reply_with_openai_style_messages() -> None:
    llama = FakeLlama("Install it with pip")
    model = LlamaCppChatModel(llama=llama, temperature=0.3)
    text = "".join(str(c.text) for c in model.stream([SystemMessage("s"), HumanMessage("q")]))
    assert text == "Install it with pip "
    (request,) = llama.requests
    assert request["messages"] == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
    ]
    assert request["stream"] is True and request["temperature"] == 0.3


def test_structured_output_constrains_decoding_with_the_schema() -> None:
    llama = FakeLlama('{"needs_docs": true, "queries": ["install"]}')
    model = at_temperature_zero(LlamaCppChatModel(llama=llama))
    plan = asyncio.run(astructured(model, Plan, [HumanMessage("How do I install it?")]))
    assert plan == Plan(needs_docs=True, queries=["install"])
    (request,) = llama.requests
    assert request["temperature"] == 0.0
    schema = request["response_format"]["schema"]
    assert request["response_format"]["type"] == "json_object"
    assert schema["properties"]["queries"]["maxItems"] == 3


def install_parts(root: Path, prefix: str, contents: list[bytes]) -> None:
    for number, data in enumerate(contents, start=1):
        (root / f"part{number}.bin").write_bytes(data)
        (root / f"{prefix}{number}.py").write_text(
            "from pathlib import Path\n"
            f"def get_part_path():\n    return str(Path(__file__).parent / 'part{number}.bin')\n"
        )


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PackagedGGUF]:
    site = tmp_path / "site"
    site.mkdir()
    install_parts(site, "fakegguf_part", [b"GGUF\x03\x00", b"weights-", b"end"])
    monkeypatch.syspath_prepend(str(site))
    yield PackagedGGUF("fakegguf_part", 3, "fake.gguf")
    for number in range(1, 4):
        sys.modules.pop(f"fakegguf_part{number}", None)


def test_parts_are_joined_once_in_order(parts: PackagedGGUF, tmp_path: Path) -> None:
    target = reassemble_gguf(parts, tmp_path / "models")
    assert target is not None and target.read_bytes() == b"GGUF\x03\x00weights-end"
    stamp = target.stat().st_mtime_ns
    assert reassemble_gguf(parts, tmp_path / "models") == target
    assert target.stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["fake.gguf"]


def test_missing_parts_are_named(parts: PackagedGGUF, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="parts 4, 5 of 5"):
        reassemble_gguf(PackagedGGUF("fakegguf_part", 5, "x.gguf"), tmp_path / "models")


def test_uninstalled_parts_are_skipped(tmp_path: Path) -> None:
    assert reassemble_gguf(PackagedGGUF("no_such_part", 2, "x.gguf"), tmp_path) is None


def test_a_join_that_is_not_gguf_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install_parts(site, "notgguf_part", [b"PK\x03\x04", b"zip"])
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ConfigurationError, match="do not join into a GGUF"):
        reassemble_gguf(PackagedGGUF("notgguf_part", 2, "bad.gguf"), tmp_path / "models")
    assert not list((tmp_path / "models").iterdir())


def test_an_explicit_gguf_path_wins_and_must_exist(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert find_gguf(Settings(home=tmp_path, llm_gguf=str(gguf))) == gguf
    with pytest.raises(ConfigurationError, match="no such file"):
        find_gguf(Settings(home=tmp_path, llm_gguf=str(tmp_path / "missing.gguf")))


class OverflowingLlama(FakeLlama):
    """Refuses every prompt as llama-cpp-python does one longer than ``n_ctx``."""

    def create_chat_completion(self, **request: Any) -> Any:
        error = ValueError("Requested tokens (9100) exceed context window of 8192")
        if not request.get("stream"):
            raise error

        def chunks() -> Iterator[dict[str, Any]]:
            raise error
            yield {}

        return chunks()


@pytest.mark.parametrize("streamed", [False, True])
def test_a_prompt_longer_than_the_context_is_a_model_error(streamed: bool) -> None:
    model = LlamaCppChatModel(llama=OverflowingLlama(""))
    with pytest.raises(ModelError, match="does not fit the local model's context"):
        if streamed:
            list(model.stream([HumanMessage("q")]))
        else:
            model.invoke([HumanMessage("q")])
