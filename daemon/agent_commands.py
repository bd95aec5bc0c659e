"""Control verbs for coding agents (the CLI's `shadowtab shadow
write|apply|rm|mv|read|lint` and the MCP server): edits, deletes and renames go into the
shadow as model edits (shadow_workspace's agent_edits, agent_file_ops), editors showing
the files get them pushed into their buffers, and each write answers with the
diagnostics it added and removed (imports checked against the shadow's files). Control
socket only: editors have shadowtab.shadow.applyEdit. The daemon adds them to the hub's
control commands (add_agent_commands) when it builds the hub; the hub itself knows
nothing of agents."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from shadowtab.lsp.convert import to_lsp_diagnostic
from shadowtab.lsp.edits_push import push_text
from shadowtab.shadow_workspace import Diagnostic, diagnostics_delta, minimal_change
from shadowtab.shadow_workspace.agent_edits import (
    AgentWrite,
    ShadowText,
    WrittenFile,
    read_shadow_text,
    target_uri,
    write_texts,
)
from shadowtab.shadow_workspace.agent_file_ops import (
    AgentDelete,
    AgentRename,
    apply_changes,
    shadow_file_exists,
)
from shadowtab.shadow_workspace.agent_patch import apply_patch
from shadowtab.shadow_workspace.import_check import check_imports

if TYPE_CHECKING:
    from shadowtab.lsp.commands import CommandHandler
    from shadowtab.lsp.diagnostics import DiagnosticsPublisher
    from shadowtab.lsp.hub import Hub
    from shadowtab.lsp.peer import Peer
    from shadowtab.lsp.prediction_check import LintCache
    from shadowtab.lsp.predictions import PredictionService
    from shadowtab.lsp.workspace_registry import WorkspaceRegistry
    from shadowtab.shadow_workspace import ShadowWorkspace

COMMIT_REQUEST = (
    "shadowtab: the coding agent asks you to review its edits to {count} file(s) in {root} "
    "(the disk is unchanged): `shadowtab shadow diff` shows them; "
    "`shadowtab lock take --commit` writes them, `--discard` drops them.{note}"
)


LockView = tuple[str, frozenset[str]]


def add_agent_commands(hub: Hub) -> None:
    """Make the agents' verbs control commands of `hub` (never editor commands)."""
    services = hub.services
    agent = AgentCommands(
        services.commands.workspace,
        services.workspaces,
        services.peers,
        services.lints,
        services.predictions,
        services.lint_cache,
    )
    services.commands.add_control_commands(agent.handlers())


def _lock_view(workspace: ShadowWorkspace) -> LockView:
    """(holder, pending files): what the editors' status bars show."""
    return workspace.lock.holder, frozenset(workspace.pending_uris())


class AgentCommands:
    def __init__(
        self,
        workspace_of: Callable[[dict[str, Any]], ShadowWorkspace],
        workspaces: WorkspaceRegistry,
        peers: Collection[Peer],
        lints: DiagnosticsPublisher,
        predictions: PredictionService,
        lint_cache: LintCache,
    ) -> None:
        self._workspace_of = workspace_of  # the workspace a command's arguments name
        self._workspaces = workspaces
        self._peers = peers
        self._lints = lints
        self._predictions = predictions
        self._lint_cache = lint_cache

    def handlers(self) -> dict[str, CommandHandler]:
        return {
            "shadow.read": self.read,
            "shadow.write": self.write,
            "shadow.apply": self.apply,
            "shadow.rm": self.remove,
            "shadow.mv": self.rename,
            "shadow.lint": self.lint,
            "shadow.request_commit": self.request_commit,
        }

    async def read(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace_of(args)
        uri = target_uri(workspace, _string(args, "path"))
        found = await asyncio.to_thread(_existing_text, workspace, uri)
        return {
            **_where(workspace, found.path),
            "uri": found.uri,
            "text": found.text,
            "exists": found.exists,
            "pending": found.pending,
            "sha256": found.sha256,
            "holder": workspace.lock.holder,
        }

    async def lint(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace_of(args)
        uri = target_uri(workspace, _string(args, "path"))
        found = await asyncio.to_thread(_existing_text, workspace, uri)
        doc = workspace.document(uri)
        language = doc.language_id if doc is not None else None
        diagnostics, failures = await self._lint(workspace, found.path, found.text, language)
        return {
            **_where(workspace, found.path),
            "uri": uri,
            "pending": found.pending,
            "diagnostics": _dicts(diagnostics),
            "failures": failures,
        }

    async def write(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace_of(args)
        files = args.get("files")
        if not isinstance(files, list) or not files:
            raise ValueError('"files" must be a non-empty list of {path, text}')
        writes = [_agent_write(workspace, item) for item in files]
        take = bool(args.get("take", False))
        before = _lock_view(workspace)
        written = await asyncio.to_thread(write_texts, workspace, writes, take)
        return await self._after_write(workspace, written, before)

    async def apply(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace_of(args)
        patch = _string(args, "patch")
        take = bool(args.get("take", False))
        before = _lock_view(workspace)
        written = await asyncio.to_thread(apply_patch, workspace, patch, take)
        return await self._after_write(workspace, written, before)

    async def remove(self, args: dict[str, Any]) -> dict[str, Any]:
        """Delete a file in the shadow (the disk keeps it until the user commits)."""
        workspace = self._workspace_of(args)
        uri = target_uri(workspace, _string(args, "path"))
        change = AgentDelete(uri, _optional(args, "expected_sha256"))
        return await self._change(workspace, [change], bool(args.get("take", False)))

    async def rename(self, args: dict[str, Any]) -> dict[str, Any]:
        """Rename a file in the shadow, its text unchanged or replaced by "text"."""
        workspace = self._workspace_of(args)
        old = target_uri(workspace, _string(args, "path"))
        new = target_uri(workspace, _string(args, "new_path"))
        change = AgentRename(old, new, _optional(args, "text"), _optional(args, "expected_sha256"))
        return await self._change(workspace, [change], bool(args.get("take", False)))

    async def _change(
        self, workspace: ShadowWorkspace, changes: list[Any], take: bool
    ) -> dict[str, Any]:
        before = _lock_view(workspace)
        written = await asyncio.to_thread(apply_changes, workspace, changes, take)
        return await self._after_write(workspace, written, before)

    async def request_commit(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace_of(args)
        status = workspace.lock_status()
        if not status["pending"]:
            raise ValueError(f"nothing is pending in {workspace.root}: no commit to ask for")
        note = args.get("message") or ""
        if not isinstance(note, str):
            raise ValueError('"message" must be a string')
        message = COMMIT_REQUEST.format(
            count=len(status["pending"]), root=workspace.root, note=f" {note[:500]}" if note else ""
        )
        params = types.ShowMessageParams(type=types.MessageType.Info, message=message)
        sessions = list(self._peers)
        for session in sessions:
            session.notify(types.WINDOW_SHOW_MESSAGE, params)
        return {**status, "notified": len(sessions), "message": message}

    async def _after_write(
        self, workspace: ShadowWorkspace, written: list[WrittenFile], before: LockView
    ) -> dict[str, Any]:
        """Editors get the new texts at once, then their diagnostics (the lint the reply
        needs anyway: no second linter run); the caller gets what each write added to
        and removed from the lint."""
        for item in written:
            self._show_in_editors(item)
        if _lock_view(workspace)[0] == before[0] and _lock_view(workspace) != before:
            # Same holder, other pending files: the status bars' count. (A new holder is
            # announced by the lock's own listener.)
            self._workspaces.announce_lock(workspace)
        deltas = await asyncio.gather(*(self._lint_delta(workspace, item) for item in written))
        for item, (_, diagnostics) in zip(written, deltas, strict=True):
            self._publish(workspace, item, diagnostics)
        return {**workspace.lock_status(), "files": [reply for reply, _ in deltas]}

    def _show_in_editors(self, item: WrittenFile) -> None:
        if item.before == item.after or item.operation == "delete":
            return  # a deleted file's buffer keeps its text: the user reviews the delete
        self._predictions.on_document_changed(item.uri)
        if item.shown:
            for session in self._workspaces.sessions_with(item.uri):
                push_text(session, item.uri, item.before, item.after)

    def _publish(
        self, workspace: ShadowWorkspace, item: WrittenFile, diagnostics: list[Diagnostic]
    ) -> None:
        """Publish the written text's diagnostics, as the debounced linting would: to the
        editors showing it, or to all while it is a pending model edit no editor shows.
        Not when the text moved on meanwhile (a keystroke brings its own lint)."""
        doc = workspace.document(item.uri)
        if doc is None or doc.text != item.after or doc.deleted:
            return
        if not self._workspaces.sessions_with(item.uri) and not (
            workspace.lock.model_holds and doc.pending
        ):
            return
        self._lints.publish(item.uri, [to_lsp_diagnostic(d) for d in diagnostics], None)

    async def _lint_delta(
        self, workspace: ShadowWorkspace, item: WrittenFile
    ) -> tuple[dict[str, Any], list[Diagnostic]]:
        language = item.language_id or None
        old: list[Diagnostic] = []
        new: list[Diagnostic] = []
        failures: dict[str, str] = {}
        if item.operation != "delete":  # a deleted file has nothing left to lint
            (old, _), (new, failures) = await asyncio.gather(
                self._lint(workspace, item.path, item.before, language),
                self._lint(workspace, item.path, item.after, language),
            )
        reply = {
            **_where(workspace, item.path),
            "operation": item.operation,
            "source": None if item.source is None else _where(workspace, item.source)["path"],
            "uri": item.uri,
            "changed": item.before != item.after,
            "pending": item.result.pending,
            "added": _dicts(_introduced(item.before, item.after, old, new)),
            "removed": _dicts(_introduced(item.after, item.before, new, old)),
            "diagnostics": len(new),
            "failures": failures,
        }
        return reply, new

    async def _lint(
        self, workspace: ShadowWorkspace, path: Path, text: str, language: str | None
    ) -> tuple[list[Diagnostic], dict[str, str]]:
        """Diagnostics and linter failures of `text`. Through the shared lint cache: an
        agent's next write starts from the text its last write (or lint) linted, so the
        "before" side of a write is usually a cache hit, not a second linter run."""
        failures: dict[str, str] = {}

        async def run(text: str) -> list[Diagnostic]:
            report = await workspace.lint_text_report(path, text, language)
            failures.update(report.failures)
            if report.skipped is not None:  # over [limits] lint_mb: no linter ran
                failures["all linters"] = report.skipped
            return report.diagnostics

        diagnostics = await self._lint_cache.lint(str(path), text, run)
        if failures:  # a degraded lint (a linter timed out...) is no base for the next delta
            self._lint_cache.forget(str(path), text)
        # Not cached: whether an import resolves depends on the shadow's files, not the text
        imports = await asyncio.to_thread(
            check_imports, path, text, workspace.root, lambda p: shadow_file_exists(workspace, p)
        )
        return [*diagnostics, *imports], failures


def _existing_text(workspace: ShadowWorkspace, uri: str) -> ShadowText:
    found = read_shadow_text(workspace, uri)
    if not found.exists:
        raise ValueError(f"no such file: {found.path} (neither in the shadow nor on disk)")
    return found


def _introduced(
    old_text: str, new_text: str, old: list[Diagnostic], new: list[Diagnostic]
) -> list[Diagnostic]:
    """The diagnostics of `new_text` that the change from `old_text` brought in."""
    change = minimal_change(old_text, new_text)
    return diagnostics_delta(old, new, [] if change is None else [change])


def _dicts(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_dict() for d in diagnostics]


def _where(workspace: ShadowWorkspace, path: Path) -> dict[str, Any]:
    try:
        relative = str(path.relative_to(workspace.root))
    except ValueError:
        relative = str(path)
    return {"root": str(workspace.root), "path": relative}


def _string(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string')
    return value


def _optional(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string')
    return value or None


def _agent_write(workspace: ShadowWorkspace, item: Any) -> AgentWrite:
    if not isinstance(item, dict):
        raise ValueError('each of "files" must be a map {path, text[, expected_sha256]}')
    expected = item.get("expected_sha256")
    if expected is not None and not isinstance(expected, str):
        raise ValueError('"expected_sha256" must be a string')
    return AgentWrite(target_uri(workspace, _string(item, "path")), _string(item, "text"), expected)
