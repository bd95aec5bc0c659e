"""Lock and shadow commands, shared by workspace/executeCommand (`shadowtab.<name>`) and
the daemon's control socket (Hub.control(<name>, args)); the daemon adds control-only
commands of its own (add_control_commands: the coding agents' verbs)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from shadowtab.lsp.edits_push import push_text
from shadowtab.shadow_workspace import TAKE_MODES, ShadowError, path_to_uri
from shadowtab.shadow_workspace.partial_take import pending_changes, take_some
from shadowtab.shadow_workspace.save_lock import TakeMode

if TYPE_CHECKING:
    from shadowtab.lsp.workspace_registry import WorkspaceRegistry
    from shadowtab.shadow_workspace import ShadowWorkspace

logger = logging.getLogger(__name__)
T = TypeVar("T")

COMMAND_PREFIX = "shadowtab."
OPEN_WORKSPACE = "_open_workspace"  # internal flag: the control socket may open a root
# A lock or shadow command: its arguments in, its reply out (the control socket's shape).
CommandHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class CommandRunner:
    def __init__(self, workspaces: WorkspaceRegistry) -> None:
        self._workspaces = workspaces
        self._handlers: dict[str, CommandHandler] = {
            "lock.status": self.lock_status,
            "lock.take": self.lock_take,
            "lock.release": self.lock_release,
            "lock.toggle": self.lock_toggle,
            "shadow.diff": self.shadow_diff,
            "shadow.pending": self.shadow_pending,
            "shadow.commit": self.shadow_commit,
            "shadow.discard": self.shadow_discard,
        }
        # Commands of the control socket only, added by the daemon (the coding agents'
        # verbs: editors have applyEdit).
        self._control_only: dict[str, CommandHandler] = {}

    def add_control_commands(self, handlers: dict[str, CommandHandler]) -> None:
        """Commands the control socket answers and editors never get."""
        self._control_only.update(handlers)

    def control_names(self) -> list[str]:
        return [*self._handlers, *self._control_only]

    def editor_names(self) -> list[str]:
        """The commands editors get as workspace/executeCommand."""
        return list(self._handlers)

    async def control(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        """KeyError for an unknown command, ValueError for bad arguments."""
        handler = self._handlers.get(cmd) or self._control_only.get(cmd)
        if handler is None:
            raise KeyError(cmd)
        if not isinstance(args, dict):
            raise ValueError("arguments must be a map")
        try:
            return await handler({**args, OPEN_WORKSPACE: True})
        except ShadowError as exc:  # refused by the shadow workspace: bad args for the CLI
            raise ValueError(str(exc)) from exc

    async def for_editor(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        """The same command from an editor (executeCommand): existing workspaces only."""
        handler = self._handlers.get(cmd)
        if handler is None:
            raise KeyError(cmd)
        return await handler({k: v for k, v in args.items() if k != OPEN_WORKSPACE})

    def workspace(self, args: dict[str, Any]) -> ShadowWorkspace:
        """The workspace named by args["root"] (a directory inside it also names it).
        Editors may only name workspaces that exist; the control socket (the CLI, run in
        a project) may open one."""
        root = args.get("root")
        if root is None:
            known = self._workspaces.all()
            if len(known) == 1:
                return known[0]
            raise ValueError('"root" is required: the workspace root directory')
        if not isinstance(root, str) or not root:
            raise ValueError('"root" must be a directory path')
        path = Path(root).expanduser()
        if not path.is_dir():
            raise ValueError(f"not a directory: {root}")
        found = self._workspaces.containing(path)
        if found is not None:
            return found
        if not args.get(OPEN_WORKSPACE, False):
            raise ValueError(f"no shadowtab workspace holds {root}")
        return self._workspaces.for_control(path)

    async def lock_status(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.workspace(args).lock_status()

    async def lock_take(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        mode = take_mode(args)
        result = await self._synced(workspace, lambda: workspace.take(mode))
        return result.to_dict()

    async def lock_release(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        workspace.release()
        return workspace.lock_status()

    async def lock_toggle(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        mode = take_mode(args)
        return await self._synced(workspace, lambda: workspace.toggle(mode))

    async def shadow_diff(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        return {**workspace.lock_status(), "diff": workspace.pending_diff()}

    async def shadow_pending(self, args: dict[str, Any]) -> dict[str, Any]:
        """The pending files (`files`: URIs) and what changed in each (`changes`)."""
        workspace = self.workspace(args)
        changes = pending_changes(workspace)
        files = [change["uri"] for change in changes]
        return {**workspace.lock_status(), "files": files, "changes": changes}

    async def shadow_commit(self, args: dict[str, Any]) -> dict[str, Any]:
        """Commit some pending files (`files`: URIs or absolute paths); the lock stays."""
        return await self._take_some(args, "commit")

    async def shadow_discard(self, args: dict[str, Any]) -> dict[str, Any]:
        """Discard the model's edits, deletes and renames of some pending files."""
        return await self._take_some(args, "discard")

    async def _take_some(self, args: dict[str, Any], mode: TakeMode) -> dict[str, Any]:
        workspace = self.workspace(args)
        files = args.get("files")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ValueError('"files" must be a list of file URIs or absolute paths')
        uris = [f if f.startswith("file:") else path_to_uri(Path(f).absolute()) for f in files]
        result = await self._synced(workspace, lambda: take_some(workspace, mode, uris))
        return result.to_dict()

    async def _synced(self, workspace: ShadowWorkspace, step: Callable[[], T]) -> T:
        """Run `step` (a take: disk writes, so in a thread) and bring the editors' buffers
        to what it changed in the texts they show. Both texts are read in the step's own
        critical section: an editor typing meanwhile changes the shadow only before or
        after it, and that typing (already in its buffer) is never pushed back to it."""

        def run() -> tuple[T, dict[str, tuple[str, str]]]:
            with workspace.mutex:
                before = shown_texts(workspace)
                result = step()
                return result, changed_texts(workspace, before)

        result, changed = await asyncio.to_thread(run)
        for uri, (old_text, new_text) in changed.items():
            for session in self._workspaces.sessions_with(uri):
                push_text(session, uri, old_text, new_text)
        return result


def shown_texts(workspace: ShadowWorkspace) -> dict[str, str]:
    """The text of every document an editor shows: what their buffers hold."""
    return {doc.uri: doc.text for doc in workspace.open_documents()}


def changed_texts(workspace: ShadowWorkspace, before: dict[str, str]) -> dict[str, tuple[str, str]]:
    """uri -> (text before, text now) of the shown documents whose text changed."""
    changed = {}
    for uri, old_text in before.items():
        document = workspace.document(uri)
        if document is not None and document.text != old_text:
            changed[uri] = (old_text, document.text)
    return changed


def take_mode(args: dict[str, Any]) -> str:
    """The `mode` argument of take and toggle (default keep); ValueError if unknown."""
    mode = args.get("mode", "keep")
    if mode not in TAKE_MODES:
        raise ValueError(f"mode must be one of {', '.join(TAKE_MODES)}, got {mode!r}")
    return str(mode)
