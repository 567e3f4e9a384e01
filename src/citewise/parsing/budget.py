"""Lets a parser in a worker process ask for more time for work whose cost is known and
fair (OCR: seconds a page), so the parse budget stays tight for everything else."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["extend_budget", "set_budget_extender"]

_EXTENDER: Callable[[float], None] | None = None


def set_budget_extender(extender: Callable[[float], None] | None) -> None:
    """Called by the parse worker: where :func:`extend_budget` sends its requests."""
    global _EXTENDER
    _EXTENDER = extender


def extend_budget(seconds: float) -> None:
    """Add ``seconds`` to the running parse's wall-clock budget (nothing in process, where
    there is no budget)."""
    if _EXTENDER is not None and seconds > 0:
        _EXTENDER(seconds)
