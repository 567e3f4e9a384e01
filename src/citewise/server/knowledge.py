"""The knowledge-base REST API: knowledge bases, their documents and search (admin key);
reading a document and example questions (API key: what the chat page needs)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import JSONResponse, Response
from pydantic import ConfigDict, Field

from citewise.errors import (
    CitewiseError,
    ConfigurationError,
    DownloadError,
    KnowledgeBaseError,
    SourceError,
    TooLargeError,
)
from citewise.kb import (
    DEFAULT_CHILD_CHARS,
    DEFAULT_QUESTIONS,
    IndexStrategy,
    KBConfig,
    KnowledgeBase,
    SearchOptions,
)
from citewise.limits import check_file_size
from citewise.server.auth import require_admin_key, require_api_key
from citewise.server.errors import APIError, from_citewise_error
from citewise.server.json_types import JsonTyped
from citewise.server.request_options import RequestOptions
from citewise.server.runtime import Runtime, runtime_of

__all__ = ["router"]

PREFIX = "/v1/knowledge-bases"
# Reading what answers cite needs no more than asking does; managing needs the admin key.
_reader = APIRouter(
    prefix=PREFIX, tags=["knowledge bases"], dependencies=[Depends(require_api_key)]
)
_admin = APIRouter(
    prefix=PREFIX, tags=["knowledge bases"], dependencies=[Depends(require_admin_key)]
)
EXAMPLES = 4


# The index strategy's bounds (``citewise.strategies.IndexStrategy``, outside the server's
# layer; a test keeps them equal), stated in the schema.
MIN_PARENT_CHARS = 100
MIN_CHILD_CHARS = 50
MAX_QUESTIONS = 10


class CreateKnowledgeBase(JsonTyped):
    """``POST /v1/knowledge-bases``: a name and the knowledge base's own settings."""

    model_config = ConfigDict(extra="forbid")

    name: str
    strategy: str = "section"
    # The bounds of each value alone (``IndexStrategy``); those between two values (a child
    # no larger than its parent, an overlap of at most half the parent) are checked after.
    parent_chars: int = Field(default=2000, ge=MIN_PARENT_CHARS)
    child_chars: int = Field(default=DEFAULT_CHILD_CHARS, ge=MIN_CHILD_CHARS)
    qa_questions: int = Field(default=DEFAULT_QUESTIONS, ge=1, le=MAX_QUESTIONS)
    chunk_overlap: int = Field(default=0, ge=0)
    chunk_overlap_unit: str = "chars"
    # The knowledge base's own models (as ``retrieval.chat_model``/``reranker_dir``).
    chat_model: str | None = None
    reranker_dir: str | None = None
    embedder: str | None = None
    retrieval: RequestOptions = Field(default_factory=RequestOptions)
    description: str = ""


class SearchRequest(RequestOptions):
    """``POST …/search``: a query, and search options over the knowledge base's defaults
    (the fields of :class:`citewise.kb.SearchOptions`; those left out keep the defaults)."""

    query: str = Field(min_length=1)

    def overrides(self) -> SearchOptions:
        """The options the request set (only those count as set, so the rest stay defaults)."""
        return self.options()


CRAWL_URL_PATTERN = (
    r"^\s*[Hh][Tt][Tt][Pp][Ss]?://([^/?#@]*@)?"
    r"([A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])"
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{0,4}))?"
    r"([/?#].*)?$"
)
"""The start URLs the crawler takes, in the schema: http(s), a host, a port if any."""


class CrawlRequest(JsonTyped):
    """``POST …/crawl``: the start URL of a published site, and bounds over the server's
    ``CITEWISE_CRAWL_*`` settings (those left out keep them)."""

    model_config = ConfigDict(extra="forbid")

    # What the crawler takes (``normalize_url``): http(s), a host, a port if any.
    url: str = Field(min_length=1, max_length=2048, pattern=CRAWL_URL_PATTERN)
    max_pages: int | None = Field(default=None, ge=1)
    max_depth: int | None = Field(default=None, ge=1)
    max_seconds: float | None = Field(default=None, gt=0)
    max_page_bytes: int | None = Field(default=None, ge=1)
    max_total_bytes: int | None = Field(default=None, ge=1)
    exclude: list[str] | None = Field(default=None, max_length=100)
    rebuild: bool = False
    replace: bool = False


def _api_error(error: CitewiseError) -> APIError:
    if isinstance(error, TooLargeError):
        return APIError(413, str(error), code="file_too_large")
    if isinstance(error, SourceError):
        return APIError(400, str(error), param="files", code="invalid_file")
    return from_citewise_error(error)


def _open(runtime: Runtime, name: str) -> KnowledgeBase:
    """The existing knowledge base ``name`` of the server's library (404 otherwise)."""
    try:
        return runtime.kb(name)
    except KnowledgeBaseError:
        raise APIError(404, f"no knowledge base {name!r}", code="not_found") from None


def kb_json(kb: KnowledgeBase) -> dict[str, Any]:
    described = kb.describe()
    return {
        "id": kb.name,
        "object": "knowledge_base",
        **{key: value for key, value in described.items() if key != "name"},
    }


@_admin.get("")
def list_knowledge_bases(request: Request) -> dict[str, Any]:
    library = runtime_of(request).library
    return {"object": "list", "data": [kb_json(library.open(name)) for name in library.names()]}


@_admin.post("", status_code=201)
def create_knowledge_base(body: CreateKnowledgeBase, request: Request) -> dict[str, Any]:
    runtime = runtime_of(request)
    if body.name in runtime.library.names():
        raise APIError(409, f"knowledge base {body.name!r} already exists", code="conflict")
    try:
        strategy = IndexStrategy(
            body.strategy, body.parent_chars, body.child_chars, body.qa_questions,
            overlap=body.chunk_overlap, overlap_unit=body.chunk_overlap_unit,
        )  # fmt: skip
        config = KBConfig(
            strategy=strategy,
            embedder=body.embedder or runtime.settings.embedder,
            defaults=body.retrieval.options().merged(
                {"chat_model": body.chat_model, "reranker_dir": body.reranker_dir}
            ),
            description=body.description,
        )
        kb = runtime.library.create(body.name, config)
    except KnowledgeBaseError as error:
        # Created meanwhile by another request (a conflict), or a name the store refuses.
        if body.name in runtime.library.names():
            raise APIError(409, str(error), code="conflict") from None
        raise from_citewise_error(error, param="name") from None
    except CitewiseError as error:
        field = getattr(error, "field", None)
        raise from_citewise_error(error, param=field and f"retrieval.{field}") from None
    return kb_json(kb)


@_admin.get("/{kb}")
def get_knowledge_base(kb: str, request: Request) -> dict[str, Any]:
    return kb_json(_open(runtime_of(request), kb))


@_admin.delete("/{kb}")
def delete_knowledge_base(kb: str, request: Request) -> dict[str, Any]:
    _open(runtime_of(request), kb).drop()  # also forgets it in the library
    return {"id": kb, "object": "knowledge_base.deleted", "deleted": True}


@_admin.get("/{kb}/documents")
def list_documents(kb: str, request: Request) -> dict[str, Any]:
    documents = _open(runtime_of(request), kb).documents()
    return {
        "object": "list",
        "data": [{"id": d.doc_id, "object": "document", **d.as_json()} for d in documents],
    }


@_admin.post("/{kb}/documents")
async def upload_documents(
    kb: str,
    request: Request,
    files: Annotated[list[UploadFile] | None, File(description="one or more files")] = None,
    parsed: Annotated[
        UploadFile | None,
        File(description="JSON of documents an external parser parsed (preferred over files)"),
    ] = None,
    scope: Annotated[str, Form()] = "",
) -> JSONResponse:
    """Ingest the files and the parsed content in one write: all of them are stored, or (on
    any error) none. A parsed document is used instead of the file of the same id."""
    knowledge = await asyncio.to_thread(_open, runtime_of(request), kb)
    try:
        limits = knowledge.settings.parsing().limits
        content = None
        if parsed is not None:
            content = await parsed.read(limits.max_file_bytes + 1)
            check_file_size(limits, parsed.filename or "parsed", len(content))
        uploads = []
        for upload in files or []:
            name = upload.filename or ""
            # One byte past the limit is enough to refuse, without reading a huge upload.
            data = await upload.read(limits.max_file_bytes + 1)
            check_file_size(limits, name, len(data))
            uploads.append((name, data))
        report = await asyncio.to_thread(knowledge.add_upload, uploads, scope=scope, parsed=content)
    except CitewiseError as error:
        raise _api_error(error) from None
    return JSONResponse({"object": "ingest_report", **asdict(report)})


@_admin.post("/{kb}/crawl")
async def crawl_site(kb: str, body: CrawlRequest, request: Request) -> JSONResponse:
    """Crawl the published site under ``url`` into the knowledge base (an incremental
    re-crawl when it was crawled before), in one write; the report names every bound hit
    (``limits``) and every URL not indexed (``skipped``)."""
    from citewise.kb.sources import CrawlLimits

    knowledge = await asyncio.to_thread(_open, runtime_of(request), kb)
    bounds = body.model_dump(exclude={"url", "rebuild", "replace", "exclude"})
    patterns = tuple(body.exclude) if body.exclude is not None else None
    try:
        limits = CrawlLimits.from_env().with_overrides(**bounds, exclude=patterns)
        report = await asyncio.to_thread(
            knowledge.index_url, body.url, limits=limits, rebuild=body.rebuild,
            replace=body.replace,
        )  # fmt: skip
    except DownloadError as error:
        raise APIError(502, str(error), param="url", code="site_unreachable") from None
    except SourceError as error:
        raise APIError(400, str(error), param="url", code="invalid_site") from None
    except CitewiseError as error:
        raise from_citewise_error(error) from None
    return JSONResponse({"object": "ingest_report", **asdict(report)})


@_admin.delete("/{kb}/documents/{doc_id:path}")
def delete_document(kb: str, doc_id: str, request: Request) -> dict[str, Any]:
    """Delete a document: ``chunks_deleted`` is how many chunks went (0: it was not there)."""
    count = _open(runtime_of(request), kb).delete_document(doc_id)
    return {
        "id": doc_id,
        "object": "document.deleted",
        "deleted": count > 0,
        "chunks_deleted": count,
    }


@_admin.post("/{kb}/search")
async def search(kb: str, body: SearchRequest, request: Request) -> dict[str, Any]:
    """The best-matching sections, under the knowledge base's search defaults overridden by
    the request's options; ``options`` is what the search used."""
    knowledge = await asyncio.to_thread(_open, runtime_of(request), kb)
    overrides = body.overrides()
    try:
        options = await asyncio.to_thread(knowledge.resolve, overrides)
    except ConfigurationError as error:
        # The values are valid already: what resolving checks is the scope against the KB
        # and the query rewrite and reranker against the registries.
        param = error.field or "scope"
        raise APIError(400, str(error), param=param, code="invalid_value") from None
    try:
        hits = await knowledge.asearch(body.query, options)
    except CitewiseError as error:
        raise _api_error(error) from None
    return {
        "object": "list",
        "data": [hit.as_json() for hit in hits],
        "options": options.as_dict(json_types=True),
    }


# Its own router: a signed link (what answers give a browser) opens it without a key.
_linked = APIRouter(prefix=PREFIX, tags=["knowledge bases"])


@_linked.get("/{kb}/documents/{doc_id:path}/content")
async def document_content(
    kb: str,
    doc_id: str,
    request: Request,
    expires: str | None = None,
    signature: str | None = None,
) -> Response:
    """A document's text (Markdown rebuilt from its stored sections: the original file is
    not kept), what a citation of an uploaded file links to. It needs an API key, or the
    ``expires`` and ``signature`` of the link an answer gave."""
    runtime = runtime_of(request)
    if not runtime.links.valid(kb, doc_id, expires, signature):
        await require_api_key(request)
    return await asyncio.to_thread(_document_response, runtime, kb, doc_id, request)


def _document_response(runtime: Runtime, kb: str, doc_id: str, request: Request) -> Response:
    knowledge = _open(runtime, kb)
    # A browser following a citation asks for HTML: give it the page with the sections'
    # anchors, so the link lands on its section; API clients get the Markdown.
    if "text/html" in request.headers.get("accept", ""):
        page = knowledge.document_html(doc_id)
        if page is not None:
            return Response(page, media_type="text/html; charset=utf-8")
    text = knowledge.document_text(doc_id)
    if text is None:
        raise APIError(404, f"no document {doc_id!r} in {kb!r}", code="not_found")
    return Response(text, media_type="text/markdown; charset=utf-8")


@_reader.get("/{kb}/examples")
def examples(kb: str, request: Request) -> dict[str, Any]:
    """A few questions to start with, from the knowledge base's page titles."""
    titles = _open(runtime_of(request), kb).example_headings(EXAMPLES)
    data = [{"title": title, "question": f"What does the documentation say about {title}?"}
            for title in titles]  # fmt: skip
    return {"object": "list", "data": data}


# The reader's routes first: ``…/documents/{doc_id:path}`` of the admin API would take them.
router = APIRouter()
router.include_router(_linked)
router.include_router(_reader)
router.include_router(_admin)
