"""A tagged PDF's figure descriptions (``/Alt`` of its structure tree's figures), by page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from citewise.parsing.common import image_text

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["figure_texts"]

# A structure tree deeper or larger than this is malformed or hostile: the rest is ignored.
_MAX_DEPTH = 64
_MAX_NODES = 100_000


def figure_texts(reader: PdfReader) -> dict[int, list[str]]:
    """Page index → the ``[Image: …]`` texts of the figures on it, in structure order.

    Only tagged PDFs (accessible ones: Word's and LibreOffice's exports, fpdf2 with
    ``alt_text``) describe their figures; an untagged PDF gives nothing.
    """
    root: Any = reader.trailer["/Root"]
    tree = root.get_object().get("/StructTreeRoot")
    if tree is None:
        return {}
    numbers = {
        page.indirect_reference.idnum: index
        for index, page in enumerate(reader.pages)
        if page.indirect_reference is not None
    }
    found: dict[int, list[str]] = {}
    seen = 0
    stack: list[tuple[Any, Any, int]] = [(tree, None, 0)]
    while stack and seen < _MAX_NODES:
        node, page, depth = stack.pop()
        seen += 1
        node = node.get_object()
        if not isinstance(node, dict):
            continue
        page = node.get("/Pg", page)
        if node.get("/S") == "/Figure" and node.get("/Alt"):
            reference = getattr(page, "idnum", None)
            index = numbers.get(reference) if reference is not None else None
            text = image_text(str(node["/Alt"])).strip()
            if index is not None and text:
                found.setdefault(index, []).append(text)
        kids = node.get("/K")
        if kids is None or depth >= _MAX_DEPTH:
            continue
        kids = kids.get_object()
        children = kids if isinstance(kids, list) else [kids]
        # Reversed onto the stack, so they come off in document order.
        stack.extend((child, page, depth + 1) for child in reversed(children))
    return found
