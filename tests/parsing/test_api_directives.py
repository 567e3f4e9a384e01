"""mkdocstrings directives where sites write them (on a heading line, inside an admonition) and
the handler options and griffe extensions that change which objects get ids."""

from __future__ import annotations

from pathlib import Path

from citewise.parsing.api_directives import find_directives, has_directives
from citewise.parsing.markdown import parse_markdown
from citewise.parsing.mkdocstrings import ApiOptions, ApiReference

SOURCE = {
    "__init__.py": '"""Tools."""\n\nfrom tools.core import Base, Child, Options, build\n',
    "core.py": '''
"""Core."""

from typing import TypedDict


class Base:
    """A base."""

    def run(self, fast: bool = False) -> None:
        """Run it.

        Args:
            fast: Whether to hurry.
        """


class Child(Base):
    """A child."""

    def run(self, fast: bool = False) -> None:
        pass


class Options(TypedDict):
    """Build options."""

    name: str
    """The name."""
    size: int
    """The size."""


def first(items):
    """The first item.

    Type Parameters:
        T: The item type.

    Args:
        items: The items.
    """


def build(target: str, retries: int = 1) -> None:
    """Build a target.

    Args:
        target: What to build.
        retries: How often to try.
    """
''',
}


def _reference(tmp_path: Path, **options: object) -> ApiReference:
    package = tmp_path / "src" / "tools"
    package.mkdir(parents=True)
    for name, text in SOURCE.items():
        (package / name).write_text(text.lstrip("\n"), encoding="utf-8")
    return ApiReference(
        paths=(tmp_path / "src",), root=tmp_path, options=ApiOptions.from_mapping(options)
    )


def _anchors(api: ApiReference, page: str) -> list[tuple[str, int]]:
    sections = parse_markdown(page, doc_id="api.md", site_url="https://x.io/", version=None)
    problems: dict[str, str] = {}
    expanded = api.expand(sections, problems)
    assert problems == {}
    return [(s.anchor, s.level) for s in expanded]


def test_a_directive_on_a_heading_takes_the_heading_level(tmp_path: Path) -> None:
    api = _reference(tmp_path, show_root_heading=True)
    anchors = _anchors(api, "# Reference\n\n## ::: tools.build\n\nAfter.\n")
    assert anchors == [("", 1), ("tools.build", 2)]
    # The heading-form section is replaced: no section at the slug of "::: tools.build".
    page = (
        "# ::: tools.core.Base\n\nText.\n\n::: tools.build\n    options:\n      heading_level: 2\n"
    )
    assert _anchors(api, page) == [
        ("tools.core.Base", 1), ("tools.core.Base.run", 2), ("tools.build", 2)
    ]  # fmt: skip
    sections = api.expand(parse_markdown(page, doc_id="api.md", site_url="", version=None))
    # The heading's title is the object's; directives under the heading follow it.
    assert [s.heading_path for s in sections] == [
        ("class tools.core.Base",), ("class tools.core.Base", "run()"),
        ("class tools.core.Base", "tools.build()"),
    ]  # fmt: skip
    assert sections[1].text.endswith("Text.")


def test_directives_nested_in_admonitions_and_tabs(tmp_path: Path) -> None:
    api = _reference(tmp_path)
    page = (
        '# API\n\n??? abstract "API Reference"\n    ::: tools.build\n        options:\n'
        "            show_root_heading: true\n            heading_level: 3\n\n"
        '=== "Tab"\n\n    ::: tools.core.Base\n\nText.\n\n    ::: tools.core.Child\n'
    )
    text, directives = find_directives(page)
    # An indented line under a paragraph is an indented code block, not a directive.
    assert [d.identifier for d in directives] == ["tools.build", "tools.core.Base"]
    assert directives[0].options == {"show_root_heading": True, "heading_level": 3}
    assert "::: tools.core.Child" in text
    assert ("tools.build", 3) in _anchors(api, page)
    assert has_directives("!!! note\n    ::: tools.build\n")
    assert not has_directives("Para\n\n    ::: tools.build\n")


def test_parameter_headings_use_the_templates_ids(tmp_path: Path) -> None:
    api = _reference(tmp_path, show_root_heading=True, parameter_headings=True)
    anchors = [a for a, _ in _anchors(api, "# API\n\n::: tools.build\n")]
    assert anchors == ["", "tools.build", "tools.build(target)", "tools.build(retries)"]


def test_type_parameter_headings(tmp_path: Path) -> None:
    api = _reference(tmp_path, show_root_heading=True, type_parameter_headings=True)
    assert [o.path for o in api.render("tools.core.first")] == [
        "tools.core.first", "tools.core.first[T]"
    ]  # fmt: skip


def test_inherited_docstrings_extension(tmp_path: Path) -> None:
    plain = _reference(tmp_path)
    # Without the extension the undocumented override is not rendered.
    assert [o.path for o in plain.render("tools.core.Child")] == []
    api = ApiReference(
        paths=plain.paths, root=plain.root,
        options=ApiOptions.from_mapping({"extensions": ["griffe_inherited_docstrings"]}),
    )  # fmt: skip
    (run,) = api.render("tools.core.Child")
    assert run.path == "tools.core.Child.run" and "Run it." in run.text


def test_unpack_typeddict_extension_turns_keys_into_parameters(tmp_path: Path) -> None:
    plain = _reference(tmp_path)
    assert [o.path for o in plain.render("tools.core.Options")] == [
        "tools.core.Options.name", "tools.core.Options.size"
    ]  # fmt: skip
    api = ApiReference(
        paths=plain.paths, root=plain.root,
        options=ApiOptions.from_mapping({
            "extensions": [{"unpack_typeddict": {}}], "parameter_headings": True,
            "show_root_heading": True, "merge_init_into_class": True,
        }),
    )  # fmt: skip
    paths = [o.path for o in api.render("tools.core.Options")]
    assert paths == ["tools.core.Options", "tools.core.Options(name)", "tools.core.Options(size)"]


def test_an_extension_from_a_path_or_package_is_never_loaded(tmp_path: Path) -> None:
    plain = _reference(tmp_path)
    script = tmp_path / "ext.py"
    script.write_text("raise SystemExit('ran the site code')\n", encoding="utf-8")
    api = ApiReference(
        paths=plain.paths, root=plain.root,
        options=ApiOptions.from_mapping({"extensions": [str(script), "some_package"]}),
    )  # fmt: skip
    assert [o.path for o in api.render("tools.core.Base")] == ["tools.core.Base.run"]
