"""A client that disconnects cancels its run: the model is asked for no token after it."""

from __future__ import annotations

from pathlib import Path

from openai.types.responses import ResponseOutputItemAddedEvent, ResponseTextDeltaEvent

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import script

from .conftest import ENDLESS_WORDS, EndlessModel, client


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
                # Status is a reasoning item; the answer is the message that follows it.
                answering = event.item.type == "message"
            if answering and isinstance(event, ResponseTextDeltaEvent):
                break
        stream.close()  # the client goes away mid-answer
        assert model.stopped.wait(timeout=60), "the model kept streaming after the disconnect"
        produced = len(model.produced)
        assert produced < ENDLESS_WORDS
    # The server is shut down: had the run gone on, the model would have produced more.
    assert len(model.produced) == produced
