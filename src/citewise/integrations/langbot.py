"""A LangBot knowledge-engine plugin on the langbot-plugin SDK: citewise knowledge bases that
LangBot creates, fills with uploaded (or parser-plugin parsed) files, searches and prunes.

Each LangBot knowledge base is the citewise knowledge base ``langbot-<kb_id>`` in the citewise
home of the plugin process (``CITEWISE_HOME``), created with the settings LangBot's form
collects (``creation_schema``: strategy, embedder, retrieval defaults) and searched with
citewise's search options (``retrieval_schema``: top_k, search_type, rerank,
context_window, scope), each request's values over the knowledge base's defaults.

A file's citewise document id is ``<document_id>/<filename>``, so deleting a LangBot document
removes exactly its chunks (the count is logged and kept on the result of
:meth:`CitewiseEngine.delete_document_chunks`).

``write_plugin(directory)`` writes the plugin (manifest, component, entry point) for
``lbp run`` / ``lbp build``; its Python files import this module, so the plugin's environment
needs ``citewise[langbot]``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import warnings
from pathlib import Path
from typing import Any

from citewise.errors import CitewiseError, MissingExtraError
from citewise.kb import STRATEGIES, IndexStrategy, KBConfig, KnowledgeBase, Library, parse_options
from citewise.models import Hit

try:
    # The SDK's models use pydantic's class-based config, deprecated: not our warning to raise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langbot_plugin.api.definition.components.knowledge_engine.engine import (
            KnowledgeEngine,
            KnowledgeEngineCapability,
        )
        from langbot_plugin.api.definition.plugin import BasePlugin
        from langbot_plugin.api.entities.builtin.provider.message import ContentElement
        from langbot_plugin.api.entities.builtin.rag.context import (
            RetrievalContext,
            RetrievalResponse,
            RetrievalResultEntry,
        )
        from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
        from langbot_plugin.api.entities.builtin.rag.models import (
            IngestionContext,
            IngestionResult,
            ParseResult,
        )
except ImportError as missing:
    raise MissingExtraError("langbot-plugin", "langbot", "The LangBot plugin") from missing

log = logging.getLogger(__name__)

PLUGIN_AUTHOR = "citewise"
PLUGIN_NAME = "citewise"
ENGINE_NAME = "citewise"
KB_PREFIX = "langbot-"
# The search options a LangBot retrieval form may set (the rest stay the knowledge base's).
RETRIEVAL_KEYS = ("top_k", "search_type", "rerank", "context_window", "scope", "query_rewrite")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def kb_name(kb_id: str) -> str:
    """The citewise knowledge base of a LangBot knowledge base id."""
    return KB_PREFIX + (_UNSAFE.sub("-", kb_id).strip("-.") or "kb")


def doc_prefix(document_id: str) -> str:
    return _UNSAFE.sub("-", document_id).strip("-.") + "/"


def kb_config(settings: dict[str, Any]) -> KBConfig:
    """A citewise knowledge base's settings from LangBot's creation form."""
    strategy = str(settings.get("strategy") or "section")
    if strategy not in STRATEGIES:
        raise CitewiseError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    defaults = {key: settings[key] for key in RETRIEVAL_KEYS if settings.get(key) not in (None, "")}
    return KBConfig(
        strategy=IndexStrategy(strategy),
        embedder=str(settings.get("embedder") or "minilm"),
        defaults=parse_options(defaults),
        description=str(settings.get("description") or ""),
    )


def parsed_json(document_id: str, parsed: ParseResult) -> bytes:
    """A parser plugin's ``ParseResult`` as citewise's pre-parsed content JSON."""
    sections = [
        {
            "heading": section.heading or "",
            "level": max(section.level, 1),
            "page": section.page,
            "content": section.content,
        }
        for section in parsed.sections
        if section.content.strip()
    ]
    document = {"id": document_id, "metadata": parsed.metadata, "text": parsed.text}
    return json.dumps({"documents": [{**document, "sections": sections}]}).encode()


def retrieval_entry(hit: Hit, document_id: str) -> RetrievalResultEntry:
    """One search hit as LangBot's ``RetrievalResultEntry`` (the section's URL in metadata)."""
    chunk = hit.chunk
    return RetrievalResultEntry(
        id=chunk.chunk_id,
        content=[ContentElement(type="text", text=hit.passage)],
        metadata={
            "url": chunk.url,
            "title": chunk.heading_path[-1] if chunk.heading_path else chunk.doc_id,
            "document_id": document_id,
            "doc_id": chunk.doc_id,
            "rankers": list(hit.rankers),
        },
        distance=max(0.0, 1.0 - hit.score),
        score=hit.score,
    )


class CitewiseEngine(KnowledgeEngine):  # type: ignore[misc, unused-ignore]
    """The knowledge engine: LangBot's knowledge-base lifecycle on citewise's service layer."""

    @classmethod
    def get_capabilities(cls) -> list[str]:
        capability = KnowledgeEngineCapability
        return [capability.DOC_INGESTION, capability.DOC_PARSING]

    def _kb(self, kb_id: str) -> KnowledgeBase:
        return Library.shared().get(kb_name(kb_id))

    def _ensure(self, kb_id: str, settings: dict[str, Any]) -> KnowledgeBase:
        kb = self._kb(kb_id)
        if not kb.exists:
            kb.library.create(kb.name, kb_config(settings))
        return kb

    async def on_knowledge_base_create(self, kb_id: str, config: dict[str, Any]) -> None:
        await asyncio.to_thread(self._ensure, kb_id, config)

    async def on_knowledge_base_delete(self, kb_id: str) -> None:
        kb = self._kb(kb_id)
        if await asyncio.to_thread(lambda: kb.exists):
            await asyncio.to_thread(kb.drop)

    async def ingest(self, context: IngestionContext) -> IngestionResult:
        file = context.file_object
        document_id = file.metadata.document_id
        name = doc_prefix(document_id) + (Path(file.metadata.filename).name or "document")
        try:
            kb = await asyncio.to_thread(
                self._ensure, context.knowledge_base_id, context.creation_settings
            )
            if context.parsed_content is not None:
                parsed = parsed_json(name, context.parsed_content)
                report = await asyncio.to_thread(lambda: kb.add_upload([], parsed=parsed))
            else:
                content = await self.plugin.get_knowledge_file_stream(file.storage_path)
                report = await asyncio.to_thread(lambda: kb.add_upload([(name, content)]))
        except CitewiseError as error:
            return IngestionResult(
                document_id=document_id,
                status=DocumentStatus.FAILED,
                error_message=str(error),
            )
        return IngestionResult(
            document_id=document_id,
            status=DocumentStatus.COMPLETED,
            chunks_created=report.chunks,
            metadata={"doc_id": name, "kb": kb.name, "skipped": report.skipped},
        )

    def delete_document_chunks(self, kb_id: str, document_id: str) -> int:
        """Delete a LangBot document's citewise documents; how many chunks went."""
        kb = self._kb(kb_id)
        if not kb.exists:
            return 0
        prefix = doc_prefix(document_id)
        doc_ids = [doc.doc_id for doc in kb.documents() if doc.doc_id.startswith(prefix)]
        return sum(kb.delete_document(doc_id) for doc_id in doc_ids)

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        removed = await asyncio.to_thread(self.delete_document_chunks, kb_id, document_id)
        log.info("deleted document %s of %s: %d chunks", document_id, kb_name(kb_id), removed)
        return removed > 0

    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse:
        kb = self._kb(context.knowledge_base_id or context.get_collection_id())
        settings = context.retrieval_settings
        overrides = {
            key: settings[key] for key in RETRIEVAL_KEYS if settings.get(key) not in (None, "")
        }
        if wanted := context.filters.get("document_id"):
            ids = [wanted] if isinstance(wanted, str) else list(wanted)
            documents = await asyncio.to_thread(kb.documents)
            prefixes = tuple(doc_prefix(i) for i in ids)
            overrides["doc_ids"] = [d.doc_id for d in documents if d.doc_id.startswith(prefixes)]
        hits = await kb.asearch(context.query, overrides)
        entries = [retrieval_entry(hit, hit.chunk.doc_id.partition("/")[0]) for hit in hits]
        return RetrievalResponse(
            results=entries, total_found=len(entries), metadata={"kb": kb.name}
        )


class CitewisePlugin(BasePlugin):  # type: ignore[misc, unused-ignore]
    """The plugin's entry class (nothing to set up: knowledge bases open on first use)."""

    async def initialize(self) -> None:
        return None


_OPTION_FIELDS: list[dict[str, Any]] = [
    {"name": "top_k", "type": "integer", "default": 5, "label": "Top K"},
    {
        "name": "search_type",
        "type": "select",
        "default": "hybrid",
        "label": "Search type",
        "options": ["hybrid", "vector", "full_text"],
    },
    {
        "name": "rerank",
        "type": "select",
        "default": "off",
        "label": "Rerank",
        "options": ["off", "llm", "cross_encoder"],
    },
    {"name": "context_window", "type": "integer", "default": 0, "label": "Context window"},
    {"name": "scope", "type": "string", "default": "", "label": "Scope"},
]


def _field(spec: dict[str, Any]) -> dict[str, Any]:
    label = {"en_US": spec["label"], "zh_Hans": spec["label"]}
    field: dict[str, Any] = {
        "name": spec["name"],
        "label": label,
        "type": spec["type"],
        "required": False,
        "default": spec["default"],
    }
    if "options" in spec:
        field["options"] = [
            {"name": o, "label": {"en_US": o, "zh_Hans": o}} for o in spec["options"]
        ]
    return field


def _manifest(
    kind: str, name: str, label: str, spec: dict[str, Any], path: str, attr: str
) -> dict[str, Any]:
    text = {"en_US": label, "zh_Hans": label}
    metadata: dict[str, Any] = {"name": name, "label": text, "description": text}
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
        "execution": {"python": {"path": path, "attr": attr}},
    }


def write_plugin(directory: Path) -> Path:
    """Write the plugin (``manifest.yaml``, ``main.py``, the knowledge-engine component) into
    ``directory``, ready for ``lbp run`` or ``lbp build``; returns the directory."""
    import yaml

    directory.mkdir(parents=True, exist_ok=True)
    components = directory / "components" / "knowledge_engine"
    components.mkdir(parents=True, exist_ok=True)
    strategy: dict[str, Any] = {
        "name": "strategy",
        "type": "select",
        "default": "section",
        "label": "Index strategy",
        "options": list(STRATEGIES),
    }
    embedder: dict[str, Any] = {
        "name": "embedder",
        "type": "string",
        "default": "minilm",
        "label": "Embedder",
    }
    engine_spec = {
        "creation_schema": [_field(f) for f in (strategy, embedder, *_OPTION_FIELDS)],
        "retrieval_schema": [_field(f) for f in _OPTION_FIELDS],
    }
    engine = _manifest(
        "KnowledgeEngine", ENGINE_NAME, "citewise", engine_spec, f"{ENGINE_NAME}.py", "Engine"
    )
    plugin = _manifest(
        "Plugin", PLUGIN_NAME, "citewise", {"config": [], "components": {}}, "main.py", "Plugin"
    )
    plugin["metadata"].update(author=PLUGIN_AUTHOR, version="0.1.0", repository="")
    plugin["spec"]["components"] = {
        "KnowledgeEngine": {"fromDirs": [{"path": "components/knowledge_engine/"}]}
    }
    (directory / "manifest.yaml").write_text(yaml.safe_dump(plugin, sort_keys=False))
    (components / f"{ENGINE_NAME}.yaml").write_text(yaml.safe_dump(engine, sort_keys=False))
    shim = "from citewise.integrations.langbot import {} as {}\n"
    (directory / "main.py").write_text(shim.format("CitewisePlugin", "Plugin"))
    (components / f"{ENGINE_NAME}.py").write_text(shim.format("CitewiseEngine", "Engine"))
    (directory / "requirements.txt").write_text("citewise[langbot]\n")
    return directory
