"""The API's own documentation: ``/openapi.json`` as the server answers (bearer keys, 400
errors in the OpenAI envelope) and the Swagger page ``/docs``, whose assets are served here."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse

__all__ = ["openapi_schema", "swagger_page"]

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
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status, description in _RESPONSES.items():
                responses.setdefault(
                    status,
                    {"description": description,
                     "content": {"application/json": {"schema": _ERROR_REF}}},
                )  # fmt: skip
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
