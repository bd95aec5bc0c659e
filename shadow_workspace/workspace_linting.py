"""Linting of a workspace's shadow documents and of scratch texts (predictions), with
debounced scheduling per document: the linting half of ShadowWorkspace."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .document import ShadowDocument
from .lint_scheduler import LintResultCallback, LintScheduler
from .linting import LinterSpec, LintReport, lint_text
from .model import Diagnostic


class WorkspaceLinting:
    root: Path
    linters: Mapping[str, LinterSpec]
    _lints: LintScheduler

    def document(self, uri: str) -> ShadowDocument | None:
        raise NotImplementedError

    def _require(self, uri: str) -> ShadowDocument:
        raise NotImplementedError

    def key_for(self, uri: str) -> str:
        raise NotImplementedError

    async def lint_report(self, uri: str) -> LintReport:
        doc = self._require(uri)
        return await self.lint_text_report(doc.path, doc.text, doc.language_id)

    async def lint(self, uri: str) -> list[Diagnostic]:
        return (await self.lint_report(uri)).diagnostics

    async def lint_text_report(
        self, path: Path | str, text: str, language_id: str | None = None
    ) -> LintReport:
        return await lint_text(self.linters, Path(path), text, language_id, cwd=self.root)

    async def lint_text(
        self, path: Path | str, text: str, language_id: str | None = None
    ) -> list[Diagnostic]:
        return (await self.lint_text_report(path, text, language_id)).diagnostics

    def schedule_lint(self, uri: str, on_result: LintResultCallback) -> asyncio.Task[None]:
        """Lint `uri` after the debounce; a newer call for it cancels this one. Calls
        on_result(uri, version, report) when the lint finished for a current version."""

        def start() -> tuple[int, Any] | None:
            doc = self.document(uri)
            if doc is None:
                return None
            return doc.version, self.lint_text_report(doc.path, doc.text, doc.language_id)

        def deliver(_key: str, version: int, report: LintReport) -> Any:
            doc = self.document(uri)
            if doc is not None and doc.version == version:  # else a newer lint follows
                return on_result(uri, version, report)
            return None

        return self._lints.schedule(self.key_for(uri), start, deliver)
