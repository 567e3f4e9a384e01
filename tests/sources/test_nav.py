"""Reading a site's nav from mkdocs.yml or zensical.toml, and the scopes derived from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.errors import ConfigurationError, SourceError
from citewise.sources.nav import (
    Nav,
    NavSection,
    ScopeRule,
    find_site_config,
    folder_nav_scopes,
    nav_scopes,
    read_site_config,
)

from ..conftest import LGOS, require
from .conftest import MKDOCS_YML

LGOS_SECTIONS = {"demo", "tutorials", "how-to-guides", "explanation"}


def lgos_nav() -> Nav:
    nav = read_site_config(require(LGOS / "zensical.toml")).nav
    assert nav is not None
    return nav


def test_zensical_toml_gives_the_site_url_docs_dir_and_nav() -> None:
    config = read_site_config(require(LGOS / "zensical.toml"))
    assert config.site_url == "https://ilkersigirci.github.io/langgraph-openai-serve/"
    assert config.docs_dir == LGOS / "docs"
    assert config.nav is not None
    assert config.nav.pages == ("index.md", "getting-started.md", "reference.md")
    demo = config.nav.sections[0]
    assert demo.title == "Demo Stack" and demo.pages[:2] == ("demo/index.md", "demo/api.md")
    assert len(demo.pages) == 8


def test_lgos_with_demo_separate_gives_demo_and_library() -> None:
    scopes = nav_scopes(lgos_nav(), ScopeRule(separate=("demo",)))
    assert set(scopes.names) == {"all", "library"} | LGOS_SECTIONS
    every_page = [p.relative_to(LGOS / "docs").as_posix() for p in (LGOS / "docs").rglob("*.md")]
    for page in every_page:
        listed = scopes.scope_of(page).split()
        if page.startswith("demo/"):
            assert listed == ["demo"], page
        else:
            assert "library" in listed and "demo" not in listed, page
    assert scopes.scope_of("tutorials/custom-graphs.md") == "tutorials library"
    assert scopes.scope_of("getting-started.md") == "library"


@pytest.mark.parametrize("entry", ["Demo Stack", "demo stack", "DEMO", "demo"])
def test_a_separate_section_is_named_by_title_or_scope(entry: str) -> None:
    scopes = nav_scopes(lgos_nav(), ScopeRule(separate=(entry,)))
    assert scopes.scope_of("demo/api.md") == "demo"


def test_without_separate_sections_the_main_scope_holds_every_page() -> None:
    scopes = nav_scopes(lgos_nav())
    assert scopes.scope_of("demo/api.md") == "demo library"
    assert scopes.scope_of("index.md") == "library"


def test_an_unknown_separate_section_lists_the_sections() -> None:
    with pytest.raises(
        ConfigurationError, match=r"no nav section named demos .*demo \(Demo Stack\)"
    ):
        nav_scopes(lgos_nav(), ScopeRule(separate=("demos",)))


def test_the_main_scope_can_be_renamed_but_not_to_all() -> None:
    scopes = nav_scopes(lgos_nav(), ScopeRule(main="package", separate=("demo",)))
    assert scopes.scope_of("reference.md") == "package"
    with pytest.raises(ConfigurationError):
        nav_scopes(lgos_nav(), ScopeRule(main="all"))


def test_mkdocs_yml_with_python_and_env_tags_loads_safely(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_bytes(
        MKDOCS_YML + b"hooks: !!python/object/apply:os.system ['touch pwned']\n"
    )
    config = read_site_config(tmp_path / "mkdocs.yml")
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    assert config.site_url == "https://widgets.example/"
    assert config.nav == Nav(
        pages=("index.md",),
        sections=(
            NavSection("Guide", ("guide/index.md", "guide/install.md")),
            NavSection("Examples", ("examples/index.md", "examples/cache.md")),
        ),
    )


def test_section_names_come_from_the_folder_else_the_title() -> None:
    nav = Nav(
        pages=("index.md",),
        sections=(
            NavSection("User Guide", ("guide/a.md", "guide/b.md")),
            NavSection("How-To Guides", ("howto.md", "recipes/x.md")),
            NavSection("All", ("all/x.md",)),
            NavSection("Library", ("lib.md",)),
            NavSection("Ünïcode Ideas!", ("ideas.md",)),
        ),
    )
    scopes = nav_scopes(nav)
    assert scopes.sections == {
        "guide": "User Guide",
        "how-to-guides": "How-To Guides",
        "all-2": "All",
        "library-2": "Library",
        "unicode-ideas": "Ünïcode Ideas!",
    }


def test_a_page_missing_from_the_nav_takes_its_folders_section() -> None:
    scopes = nav_scopes(lgos_nav(), ScopeRule(separate=("demo",)))
    assert scopes.scope_of("demo/unlisted.md") == "demo"
    assert scopes.scope_of("tutorials/unlisted.md") == "tutorials library"
    assert scopes.scope_of("elsewhere/page.md") == "library"
    assert scopes.scope_of("page.md") == "library"


def test_a_site_config_is_found_only_for_its_own_docs_folder(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "mkdocs.yml").write_bytes(MKDOCS_YML)
    assert find_site_config(tmp_path / "docs") == tmp_path / "mkdocs.yml"
    assert find_site_config(tmp_path / "other") is None
    assert folder_nav_scopes(tmp_path / "other") is None


def test_separate_scopes_without_a_nav_are_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    with pytest.raises(ConfigurationError, match="need a site navigation"):
        folder_nav_scopes(tmp_path / "docs", ScopeRule(separate=("demo",)))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("mkdocs.yml", "nav: [unclosed", "invalid YAML"),
        ("zensical.toml", "[project\n", "invalid TOML"),
        ("mkdocs.yml", "nav: index.md\n", "nav must be a list"),
    ],
)
def test_a_broken_site_config_names_the_file(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(SourceError, match=message) as error:
        read_site_config(tmp_path / name)
    assert name in str(error.value)
