"""The citewise knowledge engine running as a real LangBot plugin process (``lbp run -s``),
driven over the SDK's stdio protocol by the SDK's own runtime-side connection and handler,
with the test playing LangBot (it serves the uploaded file when the plugin asks for it)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "langbot_plugin", reason="langbot-plugin is not installed (pip install 'citewise[langbot]')"
)

from langbot_plugin.entities.io.actions.enums import (  # noqa: E402
    PluginToRuntimeAction,
    RuntimeToPluginAction,
)
from langbot_plugin.entities.io.resp import ActionResponse  # noqa: E402
from langbot_plugin.runtime.io.connection import Connection  # noqa: E402
from langbot_plugin.runtime.io.controllers.stdio.client import StdioClientController  # noqa: E402
from langbot_plugin.runtime.io.handler import Handler  # noqa: E402

from citewise.config import Settings  # noqa: E402
from citewise.integrations import langbot  # noqa: E402
from citewise.kb import KnowledgeBase  # noqa: E402
from tests.conftest import LGOS, require  # noqa: E402

KB_ID = "kb-1"
DOCUMENT_ID = "doc-42"
PAGE = "how-to-guides/authentication.md"


class LangBotHost(Handler):
    """The LangBot side of the plugin connection: answers the plugin's calls."""

    name = "TestLangBot"

    def __init__(self, connection: Connection, files: dict[str, bytes], storage: Path) -> None:
        super().__init__(connection, file_storage_dir=storage)
        self.registered = asyncio.Event()

        @self.action(PluginToRuntimeAction.REGISTER_PLUGIN)
        async def register(data: dict[str, Any]) -> ActionResponse:
            self.registered.set()
            return ActionResponse.success({})

        @self.action(PluginToRuntimeAction.GET_KNOWLEDEGE_FILE_STREAM)
        async def file_stream(data: dict[str, Any]) -> ActionResponse:
            content = files[data["storage_path"]]
            key = await self.send_file(content, Path(data["storage_path"]).suffix.lstrip("."))
            return ActionResponse.success({"file_key": key})


Session = Callable[[LangBotHost], Awaitable[None]]


async def with_plugin(plugin_dir: Path, home: Path, files: dict[str, bytes], body: Session) -> None:
    """Start the plugin process in ``plugin_dir`` and run ``body`` against it."""
    env = {**os.environ, "CITEWISE_HOME": str(home)}
    controller = StdioClientController(
        sys.executable,
        ["-m", "langbot_plugin.cli.__init__", "run", "-s"],
        env,
        working_dir=str(plugin_dir),
    )
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def connected(connection: Connection) -> None:
        host = LangBotHost(connection, files, home.parent / "transfers")
        runner = asyncio.create_task(host.run())
        try:
            await asyncio.wait_for(host.registered.wait(), 60)
            await body(host)
            done.set_result(None)
        except BaseException as error:
            done.set_exception(error)
        finally:
            runner.cancel()

    await controller.run(connected)
    await done


def ingest_context(content_path: str, **extra: Any) -> dict[str, Any]:
    return {
        "file_object": {
            "metadata": {
                "filename": "authentication.md",
                "file_size": 1,
                "mime_type": "text/markdown",
                "document_id": DOCUMENT_ID,
                "knowledge_base_id": KB_ID,
            },
            "storage_path": content_path,
        },
        "knowledge_base_id": KB_ID,
        "creation_settings": {"strategy": "section", "embedder": "minilm", "top_k": 3},
        **extra,
    }


def test_the_plugin_ingests_retrieves_and_deletes_under_the_sdk_runtime(tmp_path: Path) -> None:
    plugin_dir = langbot.write_plugin(tmp_path / "plugin")
    home = tmp_path / "home"
    files = {"kb-1/auth.md": require(LGOS / "docs" / PAGE).read_bytes()}
    seen: dict[str, Any] = {}
    kb = KnowledgeBase(langbot.kb_name(KB_ID), settings=Settings(home=home))

    async def session(host: LangBotHost) -> None:
        call = host.call_action
        settings = {"enabled": True, "priority": 0, "plugin_config": {}}
        await call(RuntimeToPluginAction.INITIALIZE_PLUGIN, {"plugin_settings": settings})
        seen["caps"] = await call(RuntimeToPluginAction.GET_RAG_CAPABILITIES, {})
        config = {"strategy": "section", "embedder": "minilm", "top_k": 3}
        await call(RuntimeToPluginAction.ON_KB_CREATE, {"kb_id": KB_ID, "config": config})
        context = ingest_context("kb-1/auth.md")
        seen["ingest"] = await call(
            RuntimeToPluginAction.INGEST_DOCUMENT, {"context": context}, timeout=120
        )
        retrieval = {
            "query": "How do I add API key authentication?",
            "knowledge_base_id": KB_ID,
            "retrieval_settings": {"top_k": 2, "search_type": "full_text"},
        }
        seen["retrieve"] = await call(
            RuntimeToPluginAction.RETRIEVE_KNOWLEDGE,
            {"retriever_name": langbot.ENGINE_NAME, "retrieval_context": retrieval},
            timeout=60,
        )
        seen["delete"] = await call(
            RuntimeToPluginAction.DELETE_DOCUMENT, {"kb_id": KB_ID, "document_id": DOCUMENT_ID}
        )
        seen["after"] = await call(
            RuntimeToPluginAction.RETRIEVE_KNOWLEDGE,
            {"retriever_name": langbot.ENGINE_NAME, "retrieval_context": retrieval},
        )
        seen["defaults"] = kb.config.defaults.top_k
        await call(RuntimeToPluginAction.ON_KB_DELETE, {"kb_id": KB_ID})

    asyncio.run(asyncio.wait_for(with_plugin(plugin_dir, home, files, session), 300))

    assert set(seen["caps"]["capabilities"]) == {"doc_ingestion", "doc_parsing"}
    assert seen["ingest"]["status"] == "completed"
    assert seen["ingest"]["chunks_created"] > 0
    results = seen["retrieve"]["results"]
    assert 0 < len(results) <= 2
    best = results[0]
    assert best["metadata"]["document_id"] == DOCUMENT_ID
    # An upload has no published site: its sections link into the document's page path.
    assert best["metadata"]["url"].startswith(f"{DOCUMENT_ID}/authentication/")
    assert "authentication" in best["content"][0]["text"].lower()
    assert seen["delete"] == {"success": True}
    assert seen["after"]["results"] == []
    assert seen["defaults"] == 3  # the creation form's retrieval default is kept
    assert not kb.exists  # deleting the LangBot knowledge base dropped citewise's


def test_pre_parsed_content_from_a_parser_plugin_is_indexed_as_given(tmp_path: Path) -> None:
    plugin_dir = langbot.write_plugin(tmp_path / "plugin")
    home = tmp_path / "home"
    parsed = {
        "text": "Quarterly report",
        "sections": [
            {"content": "Revenue grew by a third in the northern region.", "heading": "Revenue"},
            {"content": "Costs stayed flat.", "heading": "Costs", "level": 1},
        ],
        "metadata": {"pages": 2},
    }
    seen: dict[str, Any] = {}

    async def session(host: LangBotHost) -> None:
        call = host.call_action
        settings = {"enabled": True, "priority": 0, "plugin_config": {}}
        await call(RuntimeToPluginAction.INITIALIZE_PLUGIN, {"plugin_settings": settings})
        context = ingest_context("unused", parsed_content=parsed)
        context["file_object"]["metadata"]["filename"] = "q3.pdf"
        seen["ingest"] = await call(
            RuntimeToPluginAction.INGEST_DOCUMENT, {"context": context}, timeout=120
        )
        retrieval = {"query": "revenue growth", "knowledge_base_id": KB_ID}
        seen["retrieve"] = await call(
            RuntimeToPluginAction.RETRIEVE_KNOWLEDGE,
            {"retriever_name": "", "retrieval_context": retrieval},
            timeout=60,
        )

    asyncio.run(asyncio.wait_for(with_plugin(plugin_dir, home, {}, session), 300))

    assert seen["ingest"]["status"] == "completed"
    assert seen["ingest"]["metadata"]["doc_id"] == f"{DOCUMENT_ID}/q3.pdf"
    best = seen["retrieve"]["results"][0]
    assert "Revenue grew by a third" in best["content"][0]["text"]
    assert best["metadata"]["title"] == "Revenue"
