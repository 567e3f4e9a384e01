"""A client that disconnects cancels its run: the model is asked for no token after it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from openai.types.responses import ResponseOutputItemAddedEvent, ResponseTextDeltaEvent
from pydantic import Field

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import client

WORDS = 10_000


class EndlessModel(ScriptedChatModel):
    """Streams word after word (far more than any test reads) and records when it stops."""

    produced: list[int] = Field(default_factory=list)
    stopped: threading.Event = Field(default_factory=threading.Event)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        try:
            for number in range(WORDS):
                self.produced.append(number)
                yield ChatGenerationChunk(message=AIMessageChunk(content=f"word{number} "))
                await asyncio.sleep(0.01)  # a model's pace; the test waits on events, not time
        finally:
            self.stopped.set()


def test_disconnecting_cancels_the_run(lgos_home: Path) -> None:
    model = EndlessModel(reply=script())
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: model
    )
    with running(app) as url, client(url) as sdk:
        stream = sdk.responses.create(model="citewise-rag", input="How do I log?", stream=True)
        answering = False
        for event in stream:
            if isinstance(event, ResponseOutputItemAddedEvent):
                answering = event.item.phase == "final_answer"  # type: ignore[union-attr]
            if answering and isinstance(event, ResponseTextDeltaEvent):
                break
        stream.close()  # the client goes away mid-answer
        assert model.stopped.wait(timeout=60), "the model kept streaming after the disconnect"
        produced = len(model.produced)
        assert produced < WORDS
    # The server is shut down: had the run gone on, the model would have produced more.
    assert len(model.produced) == produced
