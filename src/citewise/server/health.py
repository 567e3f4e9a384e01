"""Health: ``/healthz`` says the process answers (liveness), ``/readyz`` that it can serve.

``/readyz`` reaches the store within its deadline (``CITEWISE_STORE_TIMEOUT``): 200
``{"status": "ready"}``, or 503 ``store_unavailable`` with ``Retry-After`` while the database
is down, so an orchestrator routes traffic elsewhere instead of restarting a live process.
Neither needs the API key.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from citewise.server.runtime import runtime_of

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


@router.get("/readyz")
async def readyz(request: Request) -> dict[str, str]:
    # Any store call bounded by the store's deadline will do: listing the knowledge bases.
    # A StoreUnavailableError becomes the 503 (citewise.server.errors).
    await run_in_threadpool(runtime_of(request).library.names)
    return {"status": "ready"}
