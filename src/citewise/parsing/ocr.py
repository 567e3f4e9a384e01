"""Text of scanned PDF pages (no text layer) by OCR: pypdfium2 renders, Tesseract reads.

The ``ocr`` extra brings ``pytesseract``; Tesseract itself is a system program (Debian:
``apt-get install tesseract-ocr``, plus ``tesseract-ocr-LANG`` for other languages).
``CITEWISE_OCR_LANGUAGES`` picks the languages (Tesseract's codes, ``eng+deu``; default
``eng``).
"""

from __future__ import annotations

from collections.abc import Sequence

from citewise.config import ParseSettings
from citewise.errors import SourceError

__all__ = ["OCR_DPI", "ocr_available", "ocr_languages", "ocr_pages"]

# Tesseract reads printed text best at about 300 dpi; less loses small print.
OCR_DPI = 300
# A page is never rendered larger than this (a poster-sized or hostile page would otherwise
# take gigabytes): 50 megapixels is an A3 page at 300 dpi with room to spare.
_MAX_PIXELS = 50_000_000
_INSTALL = (
    "pip install 'citewise[ocr]' and install Tesseract (Debian/Ubuntu: apt-get install "
    "tesseract-ocr)"
)


def ocr_languages() -> str:
    """Tesseract's language codes from ``CITEWISE_OCR_LANGUAGES`` (default ``eng``)."""
    return ParseSettings.from_env().ocr_languages


def ocr_available() -> str | None:
    """None when OCR can run here; otherwise what is missing and how to install it."""
    try:
        import pypdfium2  # noqa: F401
        import pytesseract
    except ImportError:
        return f"OCR needs the 'ocr' extra: {_INSTALL}"
    try:
        pytesseract.get_tesseract_version()
    except Exception:  # TesseractNotFoundError, or a binary that does not run
        return f"OCR needs the Tesseract program (the 'tesseract-ocr' package): {_INSTALL}"
    return None


def ocr_pages(data: bytes, indexes: Sequence[int], *, name: str) -> dict[int, str]:
    """Page index → the recognised text of each of ``indexes`` (0-based) of the PDF ``data``.

    Raises:
        SourceError: Tesseract failed (a language whose data is not installed, say).
    """
    import pypdfium2
    import pytesseract

    languages = ocr_languages()
    found: dict[int, str] = {}
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        raise SourceError(f"{name}: the PDF cannot be rendered for OCR ({error})") from None
    try:
        for index in indexes:
            page = document[index]
            width, height = page.get_size()  # in points, 72 to the inch
            scale = min(OCR_DPI / 72, (_MAX_PIXELS / max(width * height, 1.0)) ** 0.5)
            image = page.render(scale=scale).to_pil()
            try:
                found[index] = pytesseract.image_to_string(image, lang=languages)
            except pytesseract.TesseractError as error:
                raise SourceError(
                    f"{name}: OCR of page {index + 1} failed ({error.message.strip()}; "
                    f"CITEWISE_OCR_LANGUAGES={languages!r}: is each language's "
                    "tesseract-ocr-LANG package installed?)"
                ) from None
            finally:
                page.close()
    finally:
        document.close()
    return found
