"""Real PDF and DOCX files built in the tests: a hand-written PDF and a python-docx document."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["OutlineItem", "make_docx", "make_pdf"]


@dataclass
class OutlineItem:
    """A bookmark: its title, the (0-based) page it opens and the bookmarks under it."""

    title: str
    page: int
    children: list[OutlineItem] = field(default_factory=list)


def _pdf_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"({escaped})"


def make_pdf(
    pages: Sequence[Sequence[str]],
    outline: Sequence[OutlineItem] = (),
    title: str | None = None,
) -> bytes:
    """A valid PDF 1.4: one page per entry of ``pages``, each line set in Helvetica 12pt.

    Objects are numbered in the order they are written, and the cross-reference table holds
    each one's byte offset, so strict readers accept the file.
    """
    objects: list[str] = []

    def add(body: str) -> int:
        objects.append(body)
        return len(objects)

    def reserve() -> int:
        return add("")

    catalog = reserve()
    pages_id = reserve()
    font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_ids: list[int] = []
    for lines in pages:
        ops = ["BT", "/F1 12 Tf", "16 TL", "72 740 Td"]
        for line in lines:
            ops.append(f"{_pdf_string(line)} Tj T*")
        ops.append("ET")
        stream = "\n".join(ops)
        content = add(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
        page_ids.append(
            add(
                f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
            )
        )
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects[pages_id - 1] = f"<< /Type /Pages /Kids [{kids}] /Count {len(page_ids)} >>"

    outline_part = ""
    if outline:
        root = reserve()

        def write(items: Sequence[OutlineItem], parent: int) -> tuple[int, int, int]:
            ids = [reserve() for _ in items]
            total = 0
            for index, (item, oid) in enumerate(zip(items, ids, strict=True)):
                fields = [
                    f"/Title {_pdf_string(item.title)}",
                    f"/Parent {parent} 0 R",
                    f"/Dest [{page_ids[item.page]} 0 R /XYZ 0 792 0]",
                ]
                if index > 0:
                    fields.append(f"/Prev {ids[index - 1]} 0 R")
                if index + 1 < len(ids):
                    fields.append(f"/Next {ids[index + 1]} 0 R")
                if item.children:
                    first, last, count = write(item.children, oid)
                    fields += [f"/First {first} 0 R", f"/Last {last} 0 R", f"/Count {count}"]
                    total += count
                objects[oid - 1] = "<< " + " ".join(fields) + " >>"
            return ids[0], ids[-1], total + len(ids)

        first, last, count = write(outline, root)
        objects[root - 1] = (
            f"<< /Type /Outlines /First {first} 0 R /Last {last} 0 R /Count {count} >>"
        )
        outline_part = f" /Outlines {root} 0 R /PageMode /UseOutlines"
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_id} 0 R{outline_part} >>"
    info = add(f"<< /Title {_pdf_string(title)} >>") if title else None

    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    trailer = f"/Size {len(objects) + 1} /Root {catalog} 0 R"
    if info:
        trailer += f" /Info {info} 0 R"
    out.write(f"trailer\n<< {trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def make_docx() -> bytes:
    """A Word document with a title, headings, paragraphs, a link, lists and a table."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_paragraph("Widget Handbook", style="Title")
    document.add_paragraph("Read this before anything else.")
    document.add_heading("Installation", level=1)
    intro = document.add_paragraph("Install the widget from ")
    # python-docx has no API for hyperlinks: write the w:hyperlink element by hand.
    rel = document.part.relate_to(
        "https://pypi.org/project/widget/", RELATIONSHIP_TYPE.HYPERLINK, is_external=True
    )
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "PyPI"
    run.append(text)
    link.append(run)
    intro._p.append(link)
    intro.add_run(" with pip.")
    document.add_paragraph("Check the Python version", style="List Bullet")
    document.add_paragraph("Run pip install widget", style="List Bullet")
    document.add_paragraph("Use a virtual environment", style="List Bullet 2")
    document.add_heading("Supported platforms", level=2)
    table = document.add_table(rows=3, cols=3)
    for row, values in zip(
        table.rows,
        [("OS", "Arch", "Notes"), ("Linux", "x86_64", "tested, daily"), ("macOS", "arm64", "a|b")],
        strict=True,
    ):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("Other platforms may work.")
    document.add_heading("Configuration", level=1)
    document.add_paragraph("Set WIDGET_HOME to choose the data folder.")
    document.add_heading("Installation", level=1)
    document.add_paragraph("A second heading with the same title.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
