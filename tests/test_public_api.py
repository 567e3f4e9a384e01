"""The public surface is exactly what citewise.__all__ says."""

from __future__ import annotations

import citewise


def test_exported_members_are_public_and_present() -> None:
    exported = {name for name in dir(citewise) if not name.startswith("_")}
    modules = {name for name in exported if type(getattr(citewise, name)).__name__ == "module"}
    assert exported - modules == set(citewise.__all__)
    assert all(getattr(citewise, name) is not None for name in citewise.__all__)
