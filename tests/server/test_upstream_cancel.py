"""Clients that leave stop the model upstream: 80 clients (40 Chat Completions, 40 Responses)
asking for streamed answers leave after the third token; a loopback OpenAI-compatible model
streaming 60 tokens 50 ms apart (through the real ``ChatOpenAI`` client) counts how many of
its streams ran to the end. The same for non-streamed answers (clients that leave while
every answer is being written)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.embedding.base import register_embedder
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from tests.reliability.conftest import write_tiny_docs
from tests.reliability.hashing_cli import HashingEmbedder
from tests.server.loopback_model import LoopbackModel

CLIENTS = 80
QUESTION = "How do I install it with pip?"


def settings(tmp_path: Path, model_url: str) -> Settings:
    register_embedder("hashing", HashingEmbedder)
    home = tmp_path / "home"
    if not (home / "kb").exists():
        plain = Settings(home=home, embedder="hashing")
        KnowledgeBase("x", settings=plain).index_folder(write_tiny_docs(tmp_path))
    return Settings(
        home=home, embedder="hashing", llm_base_url=f"{model_url}/v1", llm_model="loopback"
    )


async def leave_after_tokens(client: httpx.AsyncClient, route: str, tokens: int) -> int:
    """Stream one answer and leave after ``tokens`` text deltas; the deltas seen."""
    if route == "chat":
        path, body = "/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}
    else:
        path, body = "/v1/responses", {"input": QUESTION}
    seen = 0
    body |= {"model": "citewise-rag", "stream": True}
    async with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if not line.startswith("data: {"):
                continue
            event = json.loads(line[6:])
            delta = (
                (event.get("choices") or [{}])[0].get("delta", {}).get("content")
                if route == "chat"
                else event.get("delta") if event.get("type") == "response.output_text.delta"
                else None
            )  # fmt: skip
            if delta and "word" in delta:
                seen += 1
                if seen >= tokens:
                    break
    return seen


async def whole_answer(client: httpx.AsyncClient, route: str) -> None:
    if route == "chat":
        path, body = "/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}
    else:
        path, body = "/v1/responses", {"input": QUESTION}
    await client.post(path, json=body | {"model": "citewise-rag"})


def run_clients(url: str, model: LoopbackModel, streamed: bool) -> float:
    async def main() -> None:
        limits = httpx.Limits(max_connections=CLIENTS)
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            routes = ["chat", "responses"] * (CLIENTS // 2)
            if streamed:
                seen = await asyncio.gather(*(leave_after_tokens(client, r, 3) for r in routes))
                assert seen == [3] * CLIENTS
                return
            # Whole answers: each client leaves once every answer is being written.
            asking = [asyncio.create_task(whole_answer(client, r)) for r in routes]
            deadline = time.monotonic() + 60
            while model.running < CLIENTS and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert model.running == CLIENTS, f"only {model.running} answers being written"
            for task in asking:
                task.cancel()  # the connection closes: the client is gone
            await asyncio.gather(*asking, return_exceptions=True)

    started = time.monotonic()
    asyncio.run(main())
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "non-streamed"])
def test_clients_that_leave_stop_the_upstream_stream(tmp_path: Path, streamed: bool) -> None:
    model = LoopbackModel(tokens=60, gap=0.05)
    with running(model.app) as model_url:
        app = create_app(settings(tmp_path, model_url), ServerOptions(kb="x"))
        with running(app) as url:
            took = run_clients(url, model, streamed)
            assert model.wait_idle(timeout=30), f"{model.running} upstream streams still run"
    kind = "streamed" if streamed else "non-streamed"
    print(f"{CLIENTS} clients ({kind}) left after {took:.1f} s: upstream streams finished "
          f"{model.finished}, stopped {model.stopped}")  # fmt: skip
    assert model.finished + model.stopped == CLIENTS
    assert model.finished == 0


CALLERS = 10


def leave_during_call(url: str, model: LoopbackModel, workflow: str, streamed: bool) -> None:
    """``CALLERS`` clients ask ``workflow`` and leave while the slow call is being answered."""

    async def main() -> None:
        body = {"model": workflow, "input": QUESTION, "stream": streamed}
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            asking = [
                asyncio.create_task(client.post("/v1/responses", json=body)) for _ in range(CALLERS)
            ]
            deadline = time.monotonic() + 30
            while model.calls_running < CALLERS and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert model.calls_running == CALLERS, f"only {model.calls_running} calls running"
            for task in asking:
                task.cancel()  # the connection closes: the client is gone
            await asyncio.gather(*asking, return_exceptions=True)

    asyncio.run(main())


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "non-streamed"])
@pytest.mark.parametrize(
    ("workflow", "call"),
    [("citewise-rag", "Plan"), ("citewise-agentic", "Rewrite")],
    ids=["plan", "rewrite"],
)
def test_clients_that_leave_during_a_workflow_step_stop_its_call(
    tmp_path: Path, workflow: str, call: str, streamed: bool
) -> None:
    # Each slow call takes 3 s unless its client (citewise) closes the connection first.
    model = LoopbackModel(tokens=60, gap=0.05, slow_calls=frozenset({call}), call_time=3.0)
    with running(model.app) as model_url:
        app = create_app(settings(tmp_path, model_url), ServerOptions(kb="x"))
        with running(app) as url:
            leave_during_call(url, model, workflow, streamed)
            assert model.wait_idle(timeout=30), f"{model.calls_running} calls still run"
    answers = model.finished + model.stopped
    print(f"{CALLERS} clients left during {call}: finished {model.calls_finished}, "
          f"stopped {model.calls_stopped}, answer streams started {answers}")  # fmt: skip
    assert model.calls_stopped.get(call, 0) == CALLERS
    assert model.calls_finished.get(call, 0) == 0
    assert model.finished + model.stopped == 0  # no answer was started for a client gone
