"""API entries as units, the objects a question names, and the object asked for first."""

from __future__ import annotations

from citewise.models import ApiUnit, Chunk
from citewise.retrieval.apiunits import api_unit, mentions, named_objects


def entry(anchor: str, title: str, body: str = "Does a thing.", page: str = "api/") -> Chunk:
    return Chunk(anchor or title, "api.md", 0, 0, f"Reference > {title}\n\n{body}", title,
                 ("Reference", title), anchor, f"{page}#{anchor}", page)  # fmt: skip


def test_mkdocstrings_and_autodoc_entries_are_api_units() -> None:
    method = entry("griffe.Object.is_public", "is_public")
    assert api_unit(method) == ApiUnit("griffe.Object.is_public", "object", "griffe.Object")
    assert api_unit(method).name == "is_public"  # type: ignore[union-attr]
    call = entry("requests.Session.get", "get(url, params=None, **kwargs)")
    assert api_unit(call) == ApiUnit("requests.Session.get", "function", "requests.Session")
    cls = entry("pkg.GraphConfig", "GraphConfig", "Bases: `BaseModel`\n\nA graph's config.")
    assert api_unit(cls).kind == "class"  # type: ignore[union-attr]
    assert api_unit(entry("requests.Session", "class requests.Session")).kind == "class"  # type: ignore[union-attr]
    assert api_unit(entry("griffe", "griffe", "Griffe's package.")) is not None


def test_prose_sections_are_not_api_units() -> None:
    assert api_unit(entry("settings", "Settings")) is None
    assert api_unit(entry("advanced-usage", "Advanced Usage")) is None
    assert api_unit(entry("", "Reference")) is None
    # A dotted anchor whose title is not the object's name is not an entry either.
    assert api_unit(entry("release.1.2", "Release 1.2")) is None


def test_mentions_are_code_like_names_longest_first() -> None:
    found = [m.text for m in mentions("Does griffe.Object.is_public differ from is_public?")]
    assert found == ["griffe.Object.is_public"]
    found = [m.text for m in mentions("Use `load` or GraphRegistry and call close() in my_module")]
    assert set(found) == {"load", "GraphRegistry", "close", "my_module"}
    assert mentions("How do I check a version against >=1.0,<2.0?") == []
    assert mentions("What settings does the server read from the environment?") == []


def test_the_object_named_resolves_before_its_namesakes() -> None:
    own = entry("griffe.Object.is_public", "is_public")
    mixin = entry("griffe.ObjectAliasMixin.is_public", "is_public")
    prose = entry("object-visibility", "Object visibility")
    ranked = named_objects(mentions("What does Object.is_public return?"), [mixin, prose, own])
    assert [c.anchor for c, _ in ranked] == ["griffe.Object.is_public"]
    # A bare name names every object of that name, each weakly.
    both = named_objects(mentions("what is is_public"), [mixin, own])
    assert {c.anchor for c, _ in both} == {own.anchor, mixin.anchor}
    assert all(strength == 0.5 for _, strength in both)
