"""Sphinx autodoc's choice of members over griffe objects: which objects an ``automodule`` or
``autoclass`` directive documents, and under which dotted paths (the site's ids).

The rules are autodoc's ``filter_members``: ``:members:`` (all or named), ``:undoc-members:``,
``:private-members:`` and ``:special-members:`` (all or named), ``:inherited-members:`` (all but
``object``'s, or up to the named bases), ``:exclude-members:``, ``:imported-members:``,
``:ignore-module-all:`` and a module's ``__all__``; members documented by a class or module
are documented with the same options, as autodoc passes them down. ``conf.py``'s
``autodoc_default_options``, ``autoclass_content``, ``autodoc_member_order`` and
``autodoc_inherit_docstrings`` apply as Sphinx applies them. A docstring counts when the
object has one, when an attribute has a ``#:`` comment, or (docstrings inherited, Sphinx's
default) when a base class's member of that name has one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from citewise.parsing.autodoc_docs import (
    attribute_doc,
    builtin_member,
    builtin_names,
    class_doc,
    doc_metadata,
    inherits_doc,
    member_doc,
)
from citewise.parsing.griffe_objects import griffe_module, kind_of, labels_of

__all__ = [
    "AutodocOptions",
    "AutodocSettings",
    "autodoc_objects",
]

# Options that name members: a flag (every member) or a comma-separated list of names.
_LIST_OPTIONS = ("members", "private-members", "special-members", "inherited-members")
_FLAG_OPTIONS = ("undoc-members", "imported-members", "ignore-module-all", "no-index", "noindex")
# Options each directive takes (others in autodoc_default_options do not apply to it).
_MEMBER_DIRECTIVES = ("automodule", "autoclass", "autoexception")
_CLASS_DIRECTIVES = ("autoclass", "autoexception")
# Which members a module documents: never its submodules.
_MODULE_MEMBER_KINDS = ("attribute", "type alias", "class", "function")
# autodoc's groupwise order (its documenters' member_order).
_GROUP_RANK = {"class": 20, "function": 30, "attribute": 60, "type alias": 60}

Selection = bool | tuple[str, ...]
Emit = Callable[[Any, str, int, str], Any]


@dataclass(frozen=True)
class AutodocSettings:
    """The ``conf.py`` settings that change what autodoc directives document."""

    default_options: tuple[tuple[str, str | None], ...] = ()
    class_content: str = "class"
    member_order: str = "alphabetical"
    inherit_docstrings: bool = True
    # "separated": a class's constructor is documented as its __init__/__new__ methods.
    class_signature: str = "mixed"
    # napoleon turns a docstring's "Attributes" section into ``.. attribute::`` entries.
    napoleon_attributes: bool = False

    @classmethod
    def from_conf(cls, settings: Mapping[str, Any]) -> AutodocSettings:
        """From a ``conf.py``'s literal settings (see :mod:`citewise.sources.sphinx_conf`)."""
        defaults: list[tuple[str, str | None]] = []
        raw = settings.get("autodoc_default_options")
        if isinstance(raw, Mapping):
            for name, value in raw.items():
                if value is False:
                    continue
                defaults.append((str(name), None if value is True or value is None else str(value)))
        # Sphinx before 1.8: `autodoc_default_flags = ["members", …]`.
        flags = settings.get("autodoc_default_flags")
        if isinstance(flags, list | tuple) and not defaults:
            defaults = [(str(flag), None) for flag in flags]
        content = settings.get("autoclass_content")
        order = settings.get("autodoc_member_order")
        inherit = settings.get("autodoc_inherit_docstrings")
        signature = settings.get("autodoc_class_signature")
        extensions = settings.get("extensions")
        napoleon = isinstance(extensions, list | tuple) and any(
            e in ("sphinx.ext.napoleon", "sphinxcontrib.napoleon") for e in extensions
        )
        return cls(
            default_options=tuple(defaults),
            class_content=content if content in ("class", "both", "init") else "class",
            member_order=order if order in ("alphabetical", "bysource", "groupwise") else
            "alphabetical",
            inherit_docstrings=inherit if isinstance(inherit, bool) else True,
            class_signature="separated" if signature == "separated" else "mixed",
            napoleon_attributes=napoleon and settings.get("napoleon_use_ivar") is not True,
        )  # fmt: skip


@dataclass(frozen=True)
class AutodocOptions:
    """A directive's options after ``autodoc_default_options`` (True: every member)."""

    members: Selection = False
    undoc: bool = False
    private: Selection = False
    special: Selection = False
    inherited: Selection = False
    exclude: frozenset[str] = frozenset()
    imported: bool = False
    ignore_all: bool = False
    no_index: bool = False
    member_order: str = "alphabetical"
    class_content: str = "class"
    inherit_docstrings: bool = True
    napoleon_attributes: bool = False

    @classmethod
    def resolve(
        cls, directive: str, given: Mapping[str, str], settings: AutodocSettings
    ) -> AutodocOptions:
        """A directive's own options over the defaults, as Sphinx merges them: a default
        applies unless the directive gives the option (or its ``no-`` form); a list given
        as ``+names`` extends the default list."""
        merged: dict[str, str | None] = {k: (v or None) for k, v in given.items()}
        takes_members = directive in _MEMBER_DIRECTIVES
        for name, default in settings.default_options:
            if f"no-{name}" in given or (name in _LIST_OPTIONS + ("undoc-members",)
                                         and not takes_members):  # fmt: skip
                continue
            if name not in merged:
                merged[name] = default
            elif name in _LIST_OPTIONS and (merged[name] or "").startswith("+"):
                merged[name] = ",".join(x for x in (default, (merged[name] or "")[1:]) if x)
        for name in list(merged):
            if name.startswith("no-") and name not in _FLAG_OPTIONS:
                merged.pop(name[3:], None)

        def selection(name: str) -> Selection:
            if name not in merged:
                return False
            names = tuple(n.strip() for n in (merged[name] or "").split(",") if n.strip())
            return names or True

        order = merged.get("member-order") or settings.member_order
        content = merged.get("class-doc-from") or settings.class_content
        members, private, special = (
            selection("members"), selection("private-members"), selection("special-members")
        )  # fmt: skip
        if settings.class_signature == "separated" and directive in _CLASS_DIRECTIVES:
            # The constructor's signature is shown as the __new__ and __init__ methods.
            if special is not True:
                special = (*(special or ()), "__new__", "__init__")
        if members is not True:
            # autodoc's merge_members_option: named private and special members are members.
            named = [n for sel in (private, special) if isinstance(sel, tuple) for n in sel]
            if named:
                members = tuple(dict.fromkeys((*(members or ()), *named)))
        return cls(
            members=members,
            undoc="undoc-members" in merged,
            private=private,
            special=special,
            inherited=selection("inherited-members"),
            exclude=frozenset(n.strip() for n in (merged.get("exclude-members") or "").split(",")
                              if n.strip()),  # fmt: skip
            imported="imported-members" in merged,
            ignore_all="ignore-module-all" in merged,
            no_index="no-index" in merged or "noindex" in merged,
            member_order=order if order in ("alphabetical", "bysource", "groupwise") else
            "alphabetical",
            class_content=content if content in ("class", "both", "init") else "class",
            inherit_docstrings=settings.inherit_docstrings,
            napoleon_attributes=settings.napoleon_attributes,
        )  # fmt: skip


def autodoc_objects(
    obj: Any, path: str, directive: str, opts: AutodocOptions, level: int, emit: Emit
) -> Iterator[Any]:
    """What one autodoc directive documents: the object, then its chosen members (depth
    first), each as ``emit(obj, documented_path, level, docstring)``.

    A ``:no-index:`` directive documents the same objects, but the site gives them no ids:
    nothing is emitted.
    """
    if opts.no_index:
        return
    kind = kind_of(obj)
    root = f"module-{path}" if directive == "automodule" else path
    yield emit(obj, root, level, class_doc(obj, opts) if kind == "class" else member_doc(obj, opts))
    if kind == "class" and _real_name(obj) != path.rpartition(".")[2]:
        return  # another name for a class: autodoc shows it as an alias, without members
    if kind == "class":
        yield from _docstring_attributes(obj, path, opts, level + 1, emit)
    if kind in ("module", "class"):
        yield from _members(obj, path, opts, level + 1, emit, want_all=opts.members is True)


def _real_name(obj: Any) -> str:
    try:
        return str(obj.final_target.name) if obj.is_alias else str(obj.name)
    except Exception:  # noqa: BLE001
        return str(obj.name)


def _members(
    obj: Any, path: str, opts: AutodocOptions, level: int, emit: Emit, *, want_all: bool
) -> Iterator[Any]:
    if opts.members is False and opts.inherited is False:
        return
    want_all = want_all or opts.inherited is not False
    is_module = kind_of(obj) == "module"
    candidates = _candidates(obj, opts, want_all=want_all, is_module=is_module)
    for member in _ordered(candidates, opts, obj if is_module else None):
        docstring = _kept_doc(member, obj, opts, want_all=want_all)
        if docstring is None:
            continue
        member_path = f"{path}.{member.name}"
        member_kind = kind_of(member)
        text = class_doc(member, opts) if member_kind == "class" else docstring
        yield emit(member, member_path, level, text)
        if member_kind == "class":
            yield from _docstring_attributes(member, member_path, opts, level + 1, emit)
            # autodoc documents a member class with every member (all_members=True).
            yield from _members(member, member_path, opts, level + 1, emit, want_all=True)


def _docstring_attributes(
    cls: Any, path: str, opts: AutodocOptions, level: int, emit: Emit
) -> Iterator[Any]:
    """napoleon's ``.. attribute::`` entries for a Google/NumPy docstring's "Attributes"
    section (members the class also documents itself are left to it)."""
    if not opts.napoleon_attributes:
        return
    docstring = getattr(cls, "docstring", None)
    if docstring is None or "ttributes" not in docstring.value:
        return
    griffe = griffe_module()
    for parser in (griffe.Parser.google, griffe.Parser.numpy):
        try:
            sections = docstring.parse(parser)
        except Exception:  # noqa: BLE001  (a docstring the parser cannot read)
            continue
        items = [item for section in sections if str(section.kind.value) == "attributes"
                 for item in section.value]  # fmt: skip
        if not items:
            continue
        for item in items:
            attribute = griffe.Attribute(
                str(item.name), docstring=griffe.Docstring(str(item.description or ""))
            )
            yield emit(attribute, f"{path}.{item.name}", level, str(item.description or ""))
        return


def _candidates(obj: Any, opts: AutodocOptions, *, want_all: bool, is_module: bool) -> list[Any]:
    members = dict(obj.members)
    if not is_module and opts.inherited is not False:
        try:
            inherited = obj.inherited_members
        except Exception:  # noqa: BLE001  (bases outside the source: nothing inherited)
            inherited = {}
        for name, member in inherited.items():
            if not _stops_inheritance(obj, name, opts.inherited):
                members.setdefault(name, member)
        # Members of builtin bases (BaseException.with_traceback) have no source.
        if opts.inherited is True:
            for name in builtin_names(obj):
                if name not in members and (runtime := builtin_member(obj, name)) is not None:
                    members[name] = runtime
    found = [m for m in members.values() if kind_of(m) in _MODULE_MEMBER_KINDS]
    if not want_all:
        wanted = opts.members if isinstance(opts.members, tuple) else ()
        chosen: list[Any] = []
        for name in wanted:
            if name in members and kind_of(members[name]) != "alias":
                chosen.append(members[name])
            elif not is_module and (runtime := builtin_member(obj, name)) is not None:
                chosen.append(runtime)
        return chosen
    if is_module:
        exports = _exports(obj)
        if exports is not None and not opts.ignore_all:
            return [m for m in found if m.name in exports]
        # Without __all__, a module documents what it defines: imports only when asked.
        return [m for m in found if opts.imported or not _is_import(m)]
    return found


def _exports(module: Any) -> set[str] | None:
    try:
        exports = module.exports
    except Exception:  # noqa: BLE001
        return None
    return None if exports is None else {str(getattr(e, "name", e)) for e in exports}


def _is_import(member: Any) -> bool:
    try:
        return bool(member.is_alias)
    except Exception:  # noqa: BLE001
        return True


def _stops_inheritance(cls: Any, name: str, bases: Selection) -> bool:
    """autodoc's ``is_filtered_inherited_member``: an inherited member is left out when a
    base named in ``:inherited-members:`` comes first in the MRO (``object`` by default)."""
    stops = {"object"} if bases is True else set(bases) if isinstance(bases, tuple) else set()
    try:
        mro = cls.mro()
    except Exception:  # noqa: BLE001
        return False
    for base in mro:
        if base.name in stops:
            return True
        if name in base.members:
            return False
    return False


def _kept_doc(member: Any, owner: Any, opts: AutodocOptions, *, want_all: bool) -> str | None:
    """The member's docstring when autodoc documents it ("" when undocumented but kept),
    None when it leaves it out."""
    name = member.name
    doc = member_doc(member, opts)
    attr_doc = kind_of(member) == "attribute" and bool(attribute_doc(member))
    has_doc = bool(doc) or inherits_doc(member, owner, opts)
    private = name.startswith("_")
    metadata = doc_metadata(doc)
    if "private" in metadata:
        private = True
    elif "public" in metadata:
        private = False
    special = name.startswith("__") and name.endswith("__") and len(name) > 4
    if name in opts.exclude:
        return None
    if want_all and special:
        if not _selected(opts.special, name) or name == "__doc__":
            return None
        return doc if has_doc or opts.undoc else None
    if attr_doc:
        if want_all and private:
            return doc if _selected(opts.private, name) else None
        return doc
    if want_all and private:
        return doc if (has_doc or opts.undoc) and _selected(opts.private, name) else None
    return doc if has_doc or opts.undoc else None


def _selected(selection: Selection, name: str) -> bool:
    return selection is True or isinstance(selection, tuple) and name in selection


def _ordered(members: list[Any], opts: AutodocOptions, module: Any | None) -> list[Any]:
    if opts.member_order == "bysource":
        exports = _export_order(module) if module is not None else None
        if exports:
            return sorted(members, key=lambda m: (exports.get(m.name, len(exports)), m.name))
        return sorted(members, key=lambda m: (_lineno(m), m.name))
    if opts.member_order == "groupwise":
        return sorted(members, key=lambda m: (_group(m), m.name))
    return sorted(members, key=lambda m: m.name)


def _export_order(module: Any) -> dict[str, int] | None:
    try:
        exports = module.exports
    except Exception:  # noqa: BLE001
        return None
    if not exports:
        return None
    return {str(getattr(e, "name", e)): i for i, e in enumerate(exports)}


def _group(member: Any) -> int:
    kind = kind_of(member)
    labels = labels_of(member)
    if kind == "function" and "property" in labels:
        return 60
    if kind == "function" and ("classmethod" in labels or "staticmethod" in labels):
        return 49
    return _GROUP_RANK.get(kind, 70)


def _lineno(obj: Any) -> int:
    try:
        return int(obj.lineno or 0)
    except Exception:  # noqa: BLE001
        return 0
