"""Libraries recorded for indexing on first use keep the release's choices across processes."""

from __future__ import annotations

from pathlib import Path

from citewise.config import Settings
from citewise.kb import pending
from citewise.kb.library import Library
from citewise.sources.release import ReleaseSpec


def test_a_recorded_release_keeps_where_its_dependencies_are(tmp_path: Path) -> None:
    library = Library(Settings(home=tmp_path / "home"))
    site = tmp_path / "site-packages"
    site.mkdir()
    spec = ReleaseSpec("acme", "widgets", "1.4.2", page_form="dirhtml", api_dependencies=(site,))
    pending.record(library, "widgets-1.4.2", "widgets", spec)
    # Read back from the file, as the server process that builds it on first use does.
    found = pending.pending(Library(Settings(home=tmp_path / "home")))["widgets-1.4.2"]
    assert found.spec() == spec
    bare = ReleaseSpec("acme", "gadgets", "2.0")
    pending.record(library, "gadgets-2.0", "gadgets", bare)
    assert pending.pending(library)["gadgets-2.0"].spec() == bare
