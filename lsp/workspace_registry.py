"""The hub's view of the shadow workspaces: which sessions show a document (the editors
its ShadowDocument lists), lock change broadcasts, and debounced linting shared by all
sessions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from shadowtab.lsp.diagnostics import DiagnosticsPublisher
from shadowtab.lsp.peer import peers_showing

if TYPE_CHECKING:
    from shadowtab.lsp.options import HubOptions
    from shadowtab.lsp.peer import Peer
    from shadowtab.lsp.predictions import PredictionService
    from shadowtab.shadow_workspace import DiskEvent, ShadowWorkspace, Workspaces

logger = logging.getLogger(__name__)

LOCK_CHANGED = "shadowtab/lockChanged"
DISK_CONFLICT = (
    "shadowtab: {uri} changed on disk while the model's edits to it are pending ({detail}); "
    "both versions are kept. Review with `shadowtab.shadow.diff`, then take the lock."
)


# Workspaces the control socket opened (`shadowtab lock status` run in a folder, an
# agent naming a root) that no editor took up: past this many, the least recently named
# that hold nothing (no document shown, nothing pending, the lock with the user) are
# closed. Each keeps a watcher, an index thread and a journal: a client naming one new
# folder after another grew the daemon by ~70 KB, 2 threads and an fd each, for good
# (issue 44's fuzz: 200 roots, 61 -> 75 MB and 44 -> 444 threads).
MAX_CONTROL_WORKSPACES = 8


class WorkspaceRegistry:
    def __init__(
        self, peers: Collection[Peer], predictions: PredictionService, options: HubOptions
    ) -> None:
        self._peers = peers
        self.options = options
        self._workspaces: Workspaces | None = None
        self._watched: set[int] = set()
        self._control_opened: dict[Path, int] = {}  # root -> when last named (a counter)
        self._clock = 0
        self.diagnostics = DiagnosticsPublisher(
            self.for_uri, self.sessions_with, peers, predictions, options.debounce.lint_ms / 1000
        )

    @property
    def registry(self) -> Workspaces:
        if self._workspaces is None:
            from shadowtab.shadow_workspace import Workspaces

            self._workspaces = Workspaces(
                journal_dir=self.options.state_dir / "journal",
                linters=self.options.linters,
                max_document_bytes=int(self.options.limits.document_mb * 1024 * 1024),
                lint_max_mb=self.options.limits.lint_mb,
            )
        return self._workspaces

    def for_uri(self, uri: str) -> ShadowWorkspace:
        """The workspace that holds `uri` (ValueError for a uri that is not a local file)."""
        workspace = self.registry.for_uri(uri)
        self._watch(workspace)
        self._control_opened.pop(workspace.root, None)  # an editor's now: kept
        return workspace

    def for_root(self, root: str) -> ShadowWorkspace:
        workspace = self.registry.for_root(Path(root))
        self._watch(workspace)
        self._control_opened.pop(workspace.root, None)
        return workspace

    def for_control(self, path: Path) -> ShadowWorkspace:
        """The workspace of the directory `path`, opened for the control socket: counted
        among those closed again when idle (MAX_CONTROL_WORKSPACES)."""
        known = {ws.root for ws in self.all()}
        workspace = self.registry.for_uri(path.resolve().as_uri())
        self._watch(workspace)
        if workspace.root not in known:
            self._named(workspace)
            self._close_idle(keep=workspace)
        return workspace

    def _named(self, workspace: ShadowWorkspace) -> None:
        self._clock += 1
        self._control_opened[workspace.root] = self._clock

    def _close_idle(self, keep: ShadowWorkspace) -> None:
        """Close the least recently named control workspaces that hold nothing, until at
        most MAX_CONTROL_WORKSPACES are open."""
        by_root = {ws.root: ws for ws in self.all()}
        oldest_first = sorted(self._control_opened, key=self._control_opened.__getitem__)
        for root in oldest_first:
            if len(self._control_opened) <= MAX_CONTROL_WORKSPACES:
                return
            workspace = by_root.get(root)
            if workspace is None:  # closed meanwhile
                self._control_opened.pop(root)
            elif workspace is not keep and _holds_nothing(workspace):
                self._control_opened.pop(root)
                self.close_root(root)

    def close_root(self, root: Path) -> None:
        """Stop and forget the workspace of `root`, if open (its folder is done with)."""
        real = root.resolve()
        for workspace in self.all():
            if workspace.root == real:
                self._watched.discard(id(workspace))
        if self._workspaces is not None:
            self._workspaces.close_root(real)

    def containing(self, path: Path) -> ShadowWorkspace | None:
        """The innermost existing workspace whose root holds `path`."""
        real = path.resolve()
        holding = [ws for ws in self.all() if ws.root == real or ws.root in real.parents]
        if not holding:
            return None
        workspace = max(holding, key=lambda ws: len(ws.root.parts))
        self._watch(workspace)
        if workspace.root in self._control_opened:
            self._named(workspace)  # named again: the most recent
        return workspace

    def existing_for_uri(self, uri: str) -> ShadowWorkspace | None:
        """The innermost existing workspace holding `uri`; never opens one."""
        from shadowtab.shadow_workspace import uri_to_path

        try:
            return self.containing(uri_to_path(uri))
        except (ValueError, OSError):
            return None

    def _watch(self, workspace: ShadowWorkspace) -> None:
        if id(workspace) in self._watched:
            return
        self._watched.add(id(workspace))
        loop = asyncio.get_running_loop()

        def on_lock(event: Any) -> None:
            # Lock listeners may fire from any thread (the CLI's control commands run here
            # too): hop onto the loop before touching sessions.
            loop.call_soon_threadsafe(self._broadcast_lock, workspace)

        workspace.lock.add_listener(on_lock)

        def on_disk(event: DiskEvent) -> None:  # called in the watcher's thread
            loop.call_soon_threadsafe(self._on_disk_event, event)

        workspace.add_disk_listener(on_disk)

    def _on_disk_event(self, event: DiskEvent) -> None:
        if event.kind == "conflict":
            message = DISK_CONFLICT.format(uri=event.uri, detail=event.detail)
            params = types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            for session in self.sessions_with(event.uri) or list(self._peers):
                session.notify(types.WINDOW_SHOW_MESSAGE, params)
        elif event.kind in ("followed", "rebased", "changed"):
            self.diagnostics.schedule(event.uri)

    def announce_lock(self, workspace: ShadowWorkspace) -> None:
        """Tell every session the lock's state (holder, pending files), e.g. after an
        agent's write added pending files under the same holder."""
        params = workspace.lock_status()
        for session in list(self._peers):
            session.notify(LOCK_CHANGED, params)

    def _broadcast_lock(self, workspace: ShadowWorkspace) -> None:
        params = workspace.lock_status()
        for session in list(self._peers):
            session.notify(LOCK_CHANGED, params)
        self.diagnostics.refresh_pending(workspace)

    def sessions_with(self, uri: str) -> list[Peer]:
        """The sessions whose editors show `uri`."""
        try:
            document = self.registry.for_uri(uri).document(uri)
        except ValueError:
            return []
        if document is None or not document.editors:
            return []
        return peers_showing(self._peers, document)

    def all(self) -> list[ShadowWorkspace]:
        return [] if self._workspaces is None else list(self._workspaces.all())

    def describe(self) -> list[dict[str, Any]]:
        """Each workspace's lock status, the documents too big to lint, and its project
        index (what is indexed, what was skipped and why)."""
        return [
            {
                **ws.lock_status(),
                "lint_skipped": dict(ws.lint_skipped),
                "project_index": ws.index.describe(),
            }
            for ws in self.all()
        ]

    async def close(self) -> None:
        self.diagnostics.close()
        if self._workspaces is not None:
            try:
                self._workspaces.close()
            except Exception:
                logger.exception("closing the shadow workspaces")


def _holds_nothing(workspace: ShadowWorkspace) -> bool:
    """No document an editor shows, no pending edit or conflict, the lock with the user:
    closing it loses nothing (reopening it finds the same disk and an empty journal)."""
    status = workspace.lock_status()
    return (
        not workspace.open_documents()
        and not status["pending"]
        and not status["conflicts"]
        and status["holder"] == "user"
    )
