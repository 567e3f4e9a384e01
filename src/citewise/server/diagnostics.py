"""Diagnostics routes: the history's windows and alerts, its export, clearing it, and the page.

``GET /v1/diagnostics`` (API key) is the snapshot; ``GET /v1/diagnostics/export`` the same
with the events, as a JSON download; ``POST /v1/diagnostics/clear`` (admin key) forgets them;
``GET /diagnostics`` is a small page that shows the snapshot. Both hold the readers'
feedback (``feedback``: its summary; the export also every rating with its answer).
"""

from __future__ import annotations

import asyncio
import time
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse

from citewise.kb.diagnostics import DiagnosticsHistory
from citewise.server.auth import require_admin_key, require_api_key
from citewise.server.feedback import store_of

__all__ = ["router"]

router = APIRouter(tags=["diagnostics"])


def _history(request: Request) -> DiagnosticsHistory:
    history = request.app.state.diagnostics
    assert isinstance(history, DiagnosticsHistory)
    return history


@router.get("/v1/diagnostics", dependencies=[Depends(require_api_key)])
async def snapshot(request: Request) -> dict[str, Any]:
    """Rates, error and zero-result rates and latency percentiles per operation and stage
    over the last 1m, 5m and 1h, and the active alerts."""
    snapshot, feedback = await asyncio.gather(
        asyncio.to_thread(_history(request).snapshot),
        asyncio.to_thread(store_of(request).summary),
    )
    return {**snapshot, "feedback": feedback}


@router.get("/v1/diagnostics/export", dependencies=[Depends(require_api_key)])
async def export(request: Request) -> JSONResponse:
    """The snapshot and the events behind it, as a file to attach to a bug report."""
    payload, feedback = await asyncio.gather(
        asyncio.to_thread(_history(request).export),
        asyncio.to_thread(store_of(request).export),
    )
    payload["feedback"] = feedback
    name = time.strftime("citewise-diagnostics-%Y%m%dT%H%M%SZ.json", time.gmtime())
    return JSONResponse(payload, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.post("/v1/diagnostics/clear", dependencies=[Depends(require_admin_key)])
async def clear(request: Request) -> dict[str, Any]:
    cleared = await asyncio.to_thread(_history(request).clear)
    return {"object": "diagnostics.cleared", "cleared": cleared}


@router.get("/diagnostics", include_in_schema=False)
async def page() -> HTMLResponse:
    web = files("citewise.server") / "web"
    return HTMLResponse((web / "diagnostics.html").read_text(encoding="utf-8"))
