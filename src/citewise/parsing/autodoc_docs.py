"""What Sphinx autodoc counts as an object's documentation, read from the source: its docstring,
an attribute's ``#:`` comment, the docstring it inherits (a base's member of that name, ``object``'s
and builtin bases' methods, a class's documented bases), ``autoclass_content``, and autodoc
directives written inside a docstring."""

from __future__ import annotations

import builtins
import re
from typing import TYPE_CHECKING, Any

from citewise.parsing.griffe_objects import comment_doc, descriptor_doc, griffe_module, kind_of

if TYPE_CHECKING:
    from citewise.parsing.autodoc import AutodocOptions

__all__ = [
    "attribute_doc",
    "builtin_member",
    "builtin_names",
    "class_bases",
    "class_doc",
    "doc_metadata",
    "docstring_directives",
    "inherits_doc",
    "member_doc",
    "own_doc",
]

_OBJECT_ATTRIBUTES = frozenset(dir(object))


def _builtin_bases(cls: Any) -> list[type]:
    """The builtin classes among a class's bases outside the source (``ValueError``), and
    ``object`` last."""
    names = [b.rsplit(".", 1)[-1] for b in class_bases(cls) if isinstance(b, str)]
    found = [getattr(builtins, name, None) for name in names]
    return [*(b for b in found if isinstance(b, type) and b is not object), object]


def builtin_names(cls: Any) -> list[str]:
    names: set[str] = set()
    for base in _builtin_bases(cls)[:-1]:
        names.update(n for n in dir(base) if n not in _OBJECT_ATTRIBUTES)
    return sorted(names)


def builtin_member(cls: Any, name: str) -> Any | None:
    """A member a class gets from a builtin base, as a griffe function with the builtin's
    docstring; None when no base has it, or it is ``object``'s constructor (autodoc finds
    no docstring of its own there)."""
    for base in _builtin_bases(cls):
        value = getattr(base, name, None)
        if value is None:
            continue
        if base is object and name in ("__init__", "__new__"):
            return None
        doc = getattr(value, "__doc__", None)
        if not isinstance(doc, str) or not doc.strip():
            return None
        griffe = griffe_module()
        return griffe.Function(name, docstring=griffe.Docstring(doc.strip()))
    return None


def doc_metadata(doc: str) -> set[str]:
    """The docstring's ``:meta private:`` / ``:meta public:`` fields."""
    return {line.split(":meta", 1)[1].strip(" :") for line in doc.splitlines()
            if line.strip().startswith(":meta ")}  # fmt: skip


def own_doc(obj: Any) -> str:
    try:
        docstring = obj.docstring
    except Exception:  # noqa: BLE001
        return ""
    return str(docstring.value) if docstring is not None and docstring.value else ""


def attribute_doc(obj: Any) -> str:
    """An object's own documentation: its docstring, else an attribute's ``#:`` comment or the
    ``doc=`` its descriptor is built with."""
    return own_doc(obj) or comment_doc(obj) or descriptor_doc(obj)


def member_doc(obj: Any, opts: AutodocOptions) -> str:
    """The text autodoc shows for an object: its docstring, an attribute's ``#:`` comment,
    else (inherited docstrings) the docstring of the base-class member it overrides."""
    own = attribute_doc(obj)
    if own or not opts.inherit_docstrings:
        return own
    try:
        parent = obj.parent
        if parent is None or not parent.is_class:
            return ""
        for base in parent.mro():
            found = base.members.get(obj.name)
            # A base's attribute documented by a `#:` comment counts too (autodoc reads
            # attribute comments along the MRO).
            inherited = attribute_doc(found) if found is not None else ""
            if inherited:
                return inherited
    except Exception:  # noqa: BLE001  (a base outside the source)
        return ""
    return ""


def inherits_doc(member: Any, owner: Any, opts: AutodocOptions) -> bool:
    """Whether autodoc finds a docstring the source does not show: a method of ``object``
    (``__eq__`` has "Return self==value."), a member of a builtin base, or a class whose
    bases have docstrings (``inspect.getdoc`` looks there)."""
    if not opts.inherit_docstrings:
        return False
    kind = kind_of(member)
    if kind == "class":
        return any(_base_has_doc(base) for base in class_bases(member))
    if kind == "function" and kind_of(owner) == "class":
        if member.name in _OBJECT_ATTRIBUTES:
            return True
        for base in class_bases(owner):
            if isinstance(base, str):
                runtime = getattr(builtins, base.rsplit(".", 1)[-1], None)
                if runtime is not None and getattr(getattr(runtime, member.name, None),
                                                   "__doc__", None):  # fmt: skip
                    return True
    return False


def class_bases(cls: Any) -> list[Any]:
    """A class's bases: griffe classes where the source has them, else their dotted names."""
    found: list[Any] = []
    try:
        resolved = {b.path for b in cls.resolved_bases}
        found.extend(cls.resolved_bases)
        for base in cls.bases:
            name = str(getattr(base, "canonical_path", base))
            if name not in resolved and name.rsplit(".", 1)[-1] != "object":
                found.append(name)
    except Exception:  # noqa: BLE001
        return found
    return [b for b in found if isinstance(b, str) or b.name != "object"]


def _base_has_doc(base: Any) -> bool:
    if isinstance(base, str):
        # A base outside the source (a builtin, another package): documented, as nearly all
        # are (a builtin's docstring is checked).
        runtime = getattr(builtins, base, None)
        return bool(runtime.__doc__) if isinstance(runtime, type) else True
    return bool(own_doc(base)) or any(_base_has_doc(b) for b in class_bases(base))


def class_doc(cls: Any, opts: AutodocOptions) -> str:
    """A class's text as ``autoclass_content`` says: its docstring, ``__init__``'s, or both."""
    own = own_doc(cls)
    if not own and opts.inherit_docstrings:
        own = next((own_doc(b) for b in class_bases(cls) if not isinstance(b, str) and own_doc(b)),
                   "")  # fmt: skip
    try:
        init = cls.members.get("__init__")
    except Exception:  # noqa: BLE001
        init = None
    init_doc = own_doc(init) if init is not None else ""
    if opts.class_content == "init":
        return init_doc or own
    if opts.class_content == "both":
        return "\n\n".join(t for t in (own, init_doc) if t)
    return own


_DOCSTRING_DIRECTIVE_RE = re.compile(
    r"^(?P<indent> *)\.\. +(?:py:)?(?P<kind>auto(?:module|class|exception|function|method|"
    r"attribute|data|property|decorator))::\s+(?P<target>\S[^\n]*?)\s*$"
)


_OPTION_RE = re.compile(r"^ +:(?P<name>[\w-]+):(?: +(?P<value>.*?))?\s*$")


def docstring_directives(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """The autodoc directives written in a docstring (a module's docstring documenting its
    classes): each one's kind, target and options."""
    if ".. " not in text:
        return []
    lines = text.splitlines()
    found: list[tuple[str, str, dict[str, str]]] = []
    for index, line in enumerate(lines):
        match = _DOCSTRING_DIRECTIVE_RE.match(line)
        if match is None:
            continue
        options: dict[str, str] = {}
        for following in lines[index + 1 :]:
            option = _OPTION_RE.match(following)
            if option is None or len(following) - len(following.lstrip()) <= len(match["indent"]):
                break
            options[option["name"]] = option["value"] or ""
        found.append((match["kind"], match["target"].split("(", 1)[0].strip(), options))
    return found
