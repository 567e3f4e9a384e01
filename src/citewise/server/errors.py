"""OpenAI error envelopes: every error is ``{"error": {message, type, param, code}}``."""

from __future__ import annotations

import errno
import logging
import tempfile
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from citewise.errors import (
    CitewiseError,
    ConfigurationError,
    KnowledgeBaseError,
    ModelError,
    StorageError,
    StoreUnavailableError,
)

log = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    502: "api_error",
    503: "api_error",
    507: "api_error",
}
# How long a client is asked to wait (Retry-After) when the store is unavailable.
RETRY_AFTER_SECONDS = 5
# What a full disk (or a file-size or quota limit) looks like to a write.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class APIError(Exception):
    """An error the server answers with an OpenAI error envelope and ``status``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or _TYPES.get(status, "server_error")
        self.param = param
        self.code = code
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.type, param=self.param, code=self.code)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def error_body(
    message: str, type: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def from_citewise_error(error: CitewiseError, *, param: str | None = None) -> APIError:
    """The API error for one of citewise's own errors (a setting, a KB, the chat model)."""
    if isinstance(error, StoreUnavailableError):
        # The server's store is down or locked, not the request's fault: ask again later.
        return APIError(
            503,
            str(error),
            code="store_unavailable",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    if isinstance(error, StorageError):
        # The server's disk, not the request: 507 Insufficient Storage, nothing was written.
        return APIError(507, str(error), code="storage_full")
    if isinstance(error, ConfigurationError | KnowledgeBaseError):
        return APIError(400, str(error), param=param, code="invalid_value")
    if isinstance(error, ModelError):
        return APIError(502, str(error), code="model_error")
    return APIError(500, str(error), code="server_error")


def storage_full(error: OSError) -> APIError:
    """507 for a write the server's disk refused (full, over a quota or a file-size limit)."""
    reason = error.strerror or "the disk is full"
    return APIError(
        507,
        f"the server could not write its files ({reason}); nothing was changed",
        code="storage_full",
    )


def _full_disk_cause(error: BaseException) -> OSError | None:
    """The full-disk ``OSError`` behind ``error`` (FastAPI turns any failure to parse a body,
    spooling a multipart file to disk among them, into a 400), or None."""
    cause = error.__cause__ or error.__context__
    for _ in range(8):  # a short chain: the spool's write error, maybe wrapped once
        if cause is None:
            return None
        if isinstance(cause, OSError) and cause.errno in _FULL:
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def validation_error(error: RequestValidationError) -> APIError:
    """FastAPI's 422 as OpenAI's 400, naming the first offending field as ``a.b[0].c``."""
    first = error.errors()[0] if error.errors() else {}
    where = [part for part in first.get("loc", ()) if part not in ("body", "query", "path")]
    param = ""
    for part in where:
        param += f"[{part}]" if isinstance(part, int) else (f".{part}" if param else str(part))
    message = first.get("msg", "invalid request")
    return APIError(400, f"{param}: {message}" if param else message, param=param or None)


def json_decode_error(error: RequestValidationError, body: bytes) -> APIError | None:
    """The 400 for a body that is not JSON, saying where (line and column, as ``json`` does),
    or ``None`` when ``error`` is about something else.

    FastAPI reports it as a validation error of type ``json_invalid`` located at the
    character offset (``["body", 34]``), which would otherwise read as a parameter ``[34]``.
    """
    first = error.errors()[0] if error.errors() else {}
    if first.get("type") != "json_invalid":
        return None
    reason = str((first.get("ctx") or {}).get("error") or "malformed JSON")
    offset = next((part for part in first.get("loc", ()) if isinstance(part, int)), None)
    if offset is not None:
        before = body.decode("utf-8", "replace")[:offset]
        line = before.count("\n") + 1
        column = offset - (before.rfind("\n") + 1) + 1
        reason += f" at line {line} column {column}"
    return APIError(400, f"the request body is not valid JSON: {reason}", code="invalid_json")


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> list[str]:
    """The methods the app's routes answer on ``request``'s path (for a 405's ``Allow``):
    each method is tried against the routes, included routers among them."""
    routes = request.app.router.routes
    methods = [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )  # fmt: skip
    ]
    if "GET" in methods:
        methods.insert(1, "HEAD")
    return methods


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error, expected or not, in the OpenAI envelope."""
    # Multipart uploads past 1 MiB are spooled to the temporary folder. Python finds that
    # folder on first use by writing a probe file: on a full disk the probe fails and the
    # upload reads as "no usable temporary directory". Found now, a full disk later is a
    # plain ENOSPC on the spool's write (507 below).
    tempfile.gettempdir()

    async def api_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, APIError)
        return error.response()

    async def citewise_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, CitewiseError)
        return from_citewise_error(error).response()

    async def invalid(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        first = error.errors()[0] if error.errors() else {}
        body = b""
        if first.get("type") == "json_invalid":  # a JSON body: read and kept by FastAPI
            try:
                body = await request.body()
            except RuntimeError:  # streamed, not kept (a form): no position to give
                pass
        not_json = json_decode_error(error, body)
        return (not_json or validation_error(error)).response()

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, StarletteHTTPException)
        full = _full_disk_cause(error)
        if full is not None:  # FastAPI's 400 for a body it could not spool: our disk
            log.error("%s %s: %s", request.method, request.url.path, full)
            return storage_full(full).response()
        message = {404: f"no route {request.url.path}"}.get(error.status_code, str(error.detail))
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code)
        headers = dict(getattr(error, "headers", None) or {})
        if error.status_code == 405:
            # Every method of the path, not only those of the first route matching it.
            headers["Allow"] = ", ".join(allowed_methods(request))
        return APIError(error.status_code, message, code=code, headers=headers or None).response()

    async def os_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, OSError)
        if error.errno in _FULL:
            log.error("%s %s: %s", request.method, request.url.path, error)
            return storage_full(error).response()
        return await unexpected(request, error)

    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return APIError(500, "internal server error", code="server_error").response()

    app.add_exception_handler(APIError, api_error)
    app.add_exception_handler(CitewiseError, citewise_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(OSError, os_error)
    app.add_exception_handler(Exception, unexpected)
