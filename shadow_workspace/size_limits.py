"""The document size limit (max_document_mb), checked without encoding a big text on
every keystroke."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .disk import check_document_size
from .document import ShadowDocument
from .model import TextChange


def check_text_size(path: Path, text: str, limit: int) -> None:
    """Refuse a text over the limit in UTF-8 bytes; encoded only when its length in
    code points (1 to 4 bytes each) leaves the answer open."""
    if len(text) > limit:
        check_document_size(path, len(text), limit)
    elif len(text) * 4 > limit:
        check_document_size(path, len(text.encode("utf-8", "surrogatepass")), limit)


def check_growth(doc: ShadowDocument, changes: Sequence[TextChange], limit: int) -> None:
    """Refuse changes that could take `doc` over the limit (counted in code points:
    exact bytes would mean encoding the whole text on every keystroke)."""
    kept = 0 if any(c.range is None for c in changes) else doc.length
    added = sum(len(c.text) for c in changes)
    if kept + added > limit:
        check_document_size(doc.path, kept + added, limit)
