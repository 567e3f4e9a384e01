"""The API's own documentation: ``/openapi.json`` as the server answers (bearer keys, 400
errors in the OpenAI envelope) and the Swagger page ``/docs``, whose assets are served here."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse

from citewise.kb import OVERLAP_UNITS, QUERY_REWRITES, RERANKERS, STRATEGIES

__all__ = ["KB_NAME_PATTERN", "openapi_schema", "swagger_page"]

BEARER = "bearerAuth"
_ERROR = {
    "type": "object",
    "description": "The OpenAI error envelope",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_RESPONSES = {
    "400": "Invalid request: the message names the problem, `param` the field",
    "401": "Missing or invalid API key",
    "429": "Over the rate limit (`CITEWISE_RATE_LIMIT`, when set): retry after `Retry-After`",
    "503": "The store is unavailable (database down, file locked): retry after `Retry-After`",
}
# Documented where they can happen (see _statuses).
_MORE = {
    "403": "An API key where an admin key is needed, or the admin API is closed",
    "404": "No such knowledge base, document or model",
    "408": "The request body arrived too slowly",
    "409": "The knowledge base exists already",
    "413": "The request body (or a file) is over the server's limit",
    "502": "The chat model (or the site to crawl) failed",
    "507": "The server's disk is full: nothing was written",
}
# What a knowledge-base name may be (``citewise.store.checks.KB_NAME``; a test keeps the
# two equal): the server refuses anything else with a 400.
KB_NAME_PATTERN = "^[a-z0-9][a-z0-9._-]{0,63}$"
_DOCUMENT = "/v1/knowledge-bases/{kb}/documents/{doc_id}"
_NAME = {"type": "string", "pattern": KB_NAME_PATTERN, "minLength": 1, "maxLength": 64}


def _statuses(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """The error statuses beyond 400/401/429/503 that ``method path`` can answer."""
    found = []
    admin = path.startswith(("/v1/knowledge-bases", "/v1/diagnostics/clear"))
    if admin:
        found.append("403")
    answers = path in ("/v1/responses", "/v1/chat/completions")
    if "{" in path or answers or path == "/v1/feedback" and method == "post":
        found.append("404")
    if "requestBody" in operation:
        found += ["408", "413"]
    if path == "/v1/knowledge-bases" and method == "post":
        found.append("409")
    if answers or path.endswith(("/crawl", "/search")):
        found.append("502")
    if method in ("post", "put", "patch", "delete") and admin and not path.endswith("/search"):
        found.append("507")
    return found


def _document_names(schema: dict[str, Any]) -> None:
    """The name patterns: the ``kb`` path parameter and a new knowledge base's ``name``."""
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("name") == "kb" and parameter.get("in") == "path":
                    parameter["schema"] = {**parameter.get("schema", {}), **_NAME}
    create = schema.get("components", {}).get("schemas", {}).get("CreateKnowledgeBase")
    if create is not None and "name" in create.get("properties", {}):
        create["properties"]["name"] = {**create["properties"]["name"], **_NAME}


def _document_choices(schema: dict[str, Any]) -> None:
    """The names a request may choose (index strategy, overlap unit, reranker,
    query rewrite): those the server takes, a package's included (read when the schema is
    made, after the packages registered theirs)."""
    registered: dict[str, list[Any]] = {
        "strategy": list(STRATEGIES),
        "chunk_overlap_unit": list(OVERLAP_UNITS),
        "rerank": list(RERANKERS),
        "query_rewrite": list(QUERY_REWRITES),
    }
    for model in ("CreateKnowledgeBase", "RequestOptions", "SearchRequest"):
        found = schema.get("components", {}).get("schemas", {}).get(model, {})
        properties = found.get("properties", {})
        for name, choices in registered.items():
            if name in properties:
                properties[name] = {**properties[name], "enum": choices}


def _document_content_delete(schema: dict[str, Any]) -> None:
    """``DELETE …/documents/{doc_id}/content``: the document DELETE route's ``doc_id`` takes
    slashes, so this URL deletes the document ``{doc_id}/content`` (its Allow says DELETE)."""
    paths = schema.get("paths", {})
    delete = paths.get(_DOCUMENT, {}).get("delete")
    content = paths.get(f"{_DOCUMENT}/content")
    if delete is None or content is None or "delete" in content:
        return
    content["delete"] = {
        **delete,
        "operationId": f"{delete.get('operationId', 'delete_document')}_content",
        "summary": "Delete the document {doc_id}/content",
        "description": "The document DELETE route with a ``doc_id`` ending in ``/content``.",
    }


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI schema, made once: every operation takes a bearer key (health is
    not in the schema) and answers an invalid request with a 400 in the OpenAI error
    envelope, which is what the server sends where FastAPI would document its own 422."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, summary=app.summary, routes=app.routes
    )
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "A key of CITEWISE_API_KEYS (admin routes: CITEWISE_ADMIN_KEYS); "
        "not needed when the server runs without keys",
    }
    schemas = components.setdefault("schemas", {})
    schemas["Error"] = _ERROR
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schema["security"] = [{BEARER: []}]
    for route, path in schema.get("paths", {}).items():
        for method, operation in path.items():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            statuses = {**_RESPONSES, **{s: _MORE[s] for s in _statuses(route, method, operation)}}
            for status, description in sorted(statuses.items()):
                responses.setdefault(
                    status,
                    {"description": description,
                     "content": {"application/json": {"schema": _ERROR_REF}}},
                )  # fmt: skip
    _document_names(schema)
    _document_choices(schema)
    _document_content_delete(schema)
    app.openapi_schema = schema
    return schema


def swagger_page(openapi_url: str) -> HTMLResponse:
    """The Swagger page, with its script and style from this server (no CDN: it works
    offline and behind a firewall)."""
    return get_swagger_ui_html(
        openapi_url=openapi_url,
        title="citewise API",
        swagger_js_url="/web/swagger-ui-bundle.js",
        swagger_css_url="/web/swagger-ui.css",
        swagger_favicon_url="/favicon.ico",
    )
