"""Linting a workspace's shadow document as it is now: the text is snapshotted under the
workspace's mutex (cheap) and joined and linted off the calling event loop; a document
over the size limit ([limits] lint_mb) is not linted, and the workspace says why."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from .document import ShadowDocument
from .linting import LinterSpec, LintReport, linters_for, size_skip
from .model import UnknownDocument


class Lintable(Protocol):
    """What of a ShadowWorkspace linting uses."""

    lint_max_chars: int
    lint_skipped: dict[str, str]  # uri -> why its last lint did not run

    @property
    def linters(self) -> Mapping[str, LinterSpec]: ...

    @property
    def mutex(self) -> threading.RLock: ...

    def document(self, uri: str) -> ShadowDocument | None: ...

    async def lint_text_report(
        self, path: Path | str, text: str, language_id: str | None = None
    ) -> LintReport: ...


async def lint_document(workspace: Lintable, uri: str) -> LintReport:
    with workspace.mutex:
        doc = workspace.document(uri)
        if doc is None:
            raise UnknownDocument(uri)
        path, language_id = doc.path, doc.language_id
        if not linters_for(workspace.linters, path, language_id):
            return LintReport()
        skipped = size_skip(doc.length, workspace.lint_max_chars)
        if skipped is not None:
            workspace.lint_skipped[uri] = skipped
            return LintReport(skipped=skipped)
        workspace.lint_skipped.pop(uri, None)
        snapshot = doc.snapshot()
    text = await asyncio.to_thread(snapshot)
    return await workspace.lint_text_report(path, text, language_id)
