"""The knowledge-base REST API: knowledge bases, their documents and search (admin key)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from citewise.config import Settings
from citewise.errors import CitewiseError, KnowledgeBaseError, SourceError, TooLargeError
from citewise.kbconfig import KBConfig
from citewise.knowledge import KnowledgeBase
from citewise.limits import MAX_FILE_BYTES, check_file_size
from citewise.retrieval.options import QueryRewrite, Rerank, RetrievalOptions, SearchType
from citewise.server.auth import require_admin_key
from citewise.server.errors import APIError, from_citewise_error
from citewise.strategies import DEFAULT_CHILD_CHARS, DEFAULT_QUESTIONS, IndexStrategy

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["router"]

router = APIRouter(
    prefix="/v1/knowledge-bases",
    tags=["knowledge bases"],
    dependencies=[Depends(require_admin_key)],
)


class CreateKnowledgeBase(BaseModel):
    """``POST /v1/knowledge-bases``: a name and the knowledge base's own settings."""

    model_config = ConfigDict(extra="forbid")

    name: str
    strategy: str = "section"
    parent_chars: int = 2000
    child_chars: int = DEFAULT_CHILD_CHARS
    qa_questions: int = DEFAULT_QUESTIONS
    embedder: str | None = None
    retrieval: RetrievalOptions = Field(default_factory=RetrievalOptions)
    description: str = ""


class SearchRequest(BaseModel):
    """``POST …/search``: a query and options over the knowledge base's defaults."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    top_k: int | None = None
    search_type: SearchType | None = None
    query_rewrite: QueryRewrite | None = None
    rerank: Rerank | None = None
    rerank_candidates: int | None = None
    context_window: int | None = None
    scope: str | None = None
    doc_ids: list[str] | None = None
    page_prefix: str | None = None


class _Context:
    """Settings, the chat model and open knowledge bases (each loads its embedder once)."""

    def __init__(self, settings: Settings, model: BaseChatModel | None) -> None:
        self.settings = settings
        self.model = model
        self._open: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()

    def kb(self, name: str, *, must_exist: bool = True) -> KnowledgeBase:
        with self._lock:
            kb = self._open.get(name)
            if kb is None:
                kb = KnowledgeBase(name, settings=self.settings, model=self.model)
                self._open[name] = kb
        try:
            exists = kb.exists
        except CitewiseError as error:  # an invalid name
            raise from_citewise_error(error, param="name") from None
        if must_exist and not exists:
            raise APIError(404, f"no knowledge base {name!r}", code="not_found")
        return kb

    def forget(self, name: str) -> None:
        with self._lock:
            self._open.pop(name, None)


_CONTEXT_LOCK = threading.Lock()


def _context(request: Request) -> _Context:
    """The app's context, made on first use: from ``create_app``'s runtime when there is one."""
    state = request.app.state
    with _CONTEXT_LOCK:
        context = getattr(state, "knowledge_api", None)
        if context is None:
            runtime = getattr(state, "runtime", None)
            if runtime is not None:
                context = _Context(runtime.settings, runtime.model())
            else:
                context = _Context(Settings.from_env(), None)
            state.knowledge_api = context
    assert isinstance(context, _Context)
    return context


def _api_error(error: CitewiseError) -> APIError:
    if isinstance(error, TooLargeError):
        return APIError(413, str(error), code="file_too_large")
    if isinstance(error, SourceError):
        return APIError(400, str(error), param="files", code="invalid_file")
    return from_citewise_error(error)


def kb_json(kb: KnowledgeBase) -> dict[str, Any]:
    documents = kb.documents()
    return {
        "id": kb.name,
        "object": "knowledge_base",
        **kb.config.as_json(),
        "documents": len(documents),
        "chunks": len(kb.store.chunk_ids(kb.name)),
    }


@router.get("")
def list_knowledge_bases(request: Request) -> dict[str, Any]:
    context = _context(request)
    names = KnowledgeBase("docs", settings=context.settings).store.list_kbs()
    return {"object": "list", "data": [kb_json(context.kb(name)) for name in names]}


@router.post("", status_code=201)
def create_knowledge_base(body: CreateKnowledgeBase, request: Request) -> dict[str, Any]:
    context = _context(request)
    kb = context.kb(body.name, must_exist=False)
    if kb.exists:
        raise APIError(409, f"knowledge base {body.name!r} already exists", code="conflict")
    try:
        strategy = IndexStrategy(
            body.strategy, body.parent_chars, body.child_chars, body.qa_questions
        )
        config = KBConfig(
            strategy=strategy,
            embedder=body.embedder or context.settings.embedder,
            defaults=body.retrieval,
            description=body.description,
        )
        KnowledgeBase.create(body.name, config, settings=context.settings, store=kb.store)
    except KnowledgeBaseError as error:
        raise APIError(409, str(error), code="conflict") from None
    except CitewiseError as error:
        raise from_citewise_error(error) from None
    return kb_json(kb)


@router.get("/{kb}")
def get_knowledge_base(kb: str, request: Request) -> dict[str, Any]:
    return kb_json(_context(request).kb(kb))


@router.delete("/{kb}")
def delete_knowledge_base(kb: str, request: Request) -> dict[str, Any]:
    context = _context(request)
    context.kb(kb).drop()
    context.forget(kb)
    return {"id": kb, "object": "knowledge_base.deleted", "deleted": True}


@router.get("/{kb}/documents")
def list_documents(kb: str, request: Request) -> dict[str, Any]:
    documents = _context(request).kb(kb).documents()
    return {
        "object": "list",
        "data": [{"id": d.doc_id, "object": "document", **asdict(d)} for d in documents],
    }


@router.post("/{kb}/documents")
async def upload_documents(
    kb: str,
    request: Request,
    files: Annotated[list[UploadFile], File(description="one or more files")],
    scope: Annotated[str, Form()] = "",
) -> JSONResponse:
    """Ingest the files in one write: all of them are stored, or (on any error) none."""
    knowledge = _context(request).kb(kb)
    from citewise.ingest import source_from_bytes

    try:
        sources = []
        for upload in files:
            name = upload.filename or ""
            # One byte past the limit is enough to refuse, without reading a huge upload.
            data = await upload.read(MAX_FILE_BYTES + 1)
            check_file_size(name, len(data))
            sources.append(source_from_bytes(name, data))
        report = await asyncio.to_thread(knowledge.add_documents, sources, scope=scope)
    except CitewiseError as error:
        raise _api_error(error) from None
    return JSONResponse({"object": "ingest_report", **asdict(report)})


@router.delete("/{kb}/documents/{doc_id:path}")
def delete_document(kb: str, doc_id: str, request: Request) -> dict[str, Any]:
    """Delete a document: ``chunks_deleted`` is how many chunks went (0: it was not there)."""
    count = _context(request).kb(kb).delete_document(doc_id)
    return {
        "id": doc_id,
        "object": "document.deleted",
        "deleted": count > 0,
        "chunks_deleted": count,
    }


@router.post("/{kb}/search")
async def search(kb: str, body: SearchRequest, request: Request) -> dict[str, Any]:
    knowledge = _context(request).kb(kb)
    overrides = body.model_dump(exclude={"query"}, exclude_none=True)
    try:
        options = await asyncio.to_thread(lambda: knowledge.config.defaults.merged(overrides))
        hits = await knowledge.aretrieve(body.query, overrides)
    except CitewiseError as error:
        raise _api_error(error) from None
    return {
        "object": "list",
        "data": [hit.as_json() for hit in hits],
        "options": options.model_dump(),
    }
