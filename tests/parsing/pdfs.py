"""PDFs made in the tests with fpdf2 and Pillow: ruled tables, tagged figures, scanned pages."""

from __future__ import annotations

import io
from collections.abc import Sequence

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

__all__ = ["page_image", "pdf_with_figure", "pdf_with_tables", "scanned_pdf"]


def _pdf() -> FPDF:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    return pdf


def pdf_with_tables(pages: Sequence[Sequence[str | Sequence[Sequence[str]]]]) -> bytes:
    """One PDF page per entry: each item a line of text, or a table (rows of cells, the first
    the header) drawn with its cell borders, as word processors export them."""
    pdf = _pdf()
    for items in pages:
        pdf.add_page()
        for item in items:
            if isinstance(item, str):
                pdf.multi_cell(0, 7, item, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
                continue
            with pdf.table(first_row_as_headings=True) as table:
                for cells in item:
                    row = table.row()
                    for cell in cells:
                        row.cell(cell)
            pdf.ln(4)
    return bytes(pdf.output())


def page_image(lines: Sequence[str], *, size: int = 40) -> Image.Image:
    """A white page image with ``lines`` drawn in black, as a scanner would see print."""
    font = ImageFont.load_default(size=size)
    image = Image.new("L", (1700, 2200), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((120, 150 + number * int(size * 1.6)), line, fill="black", font=font)
    return image


def scanned_pdf(first_page_text: str | None, scanned: Sequence[Sequence[str]]) -> bytes:
    """A PDF whose first page has ``first_page_text`` as real text (none: no such page) and
    then one image-only page (no text layer) per entry of ``scanned``."""
    pdf = _pdf()
    if first_page_text is not None:
        pdf.add_page()
        pdf.multi_cell(0, 7, first_page_text)
    for lines in scanned:
        pdf.add_page()
        buffer = io.BytesIO()
        page_image(lines).save(buffer, "PNG")
        buffer.seek(0)
        pdf.image(buffer, x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())


def pdf_with_figure(text: str, alt_text: str) -> bytes:
    """A tagged PDF: ``text``, then a figure whose description is ``alt_text``."""
    pdf = _pdf()
    pdf.add_page()
    pdf.multi_cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")
    buffer = io.BytesIO()
    Image.new("RGB", (60, 40), "steelblue").save(buffer, "PNG")
    buffer.seek(0)
    pdf.image(buffer, x=20, y=60, w=60, alt_text=alt_text)
    return bytes(pdf.output())
