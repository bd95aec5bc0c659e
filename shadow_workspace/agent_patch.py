"""A unified diff from a coding agent applied to the shadow: its hunks applied to the
shadow texts (pending edits included), its new, changed, deleted and renamed files put
into the shadow together (agent_file_ops), every file or none."""

from __future__ import annotations

from .agent_edits import (
    AgentWrite,
    ShadowText,
    StaleText,
    WrittenFile,
    read_shadow_text,
    target_uri,
)
from .agent_file_ops import AgentChange, AgentDelete, AgentRename, apply_changes
from .patching import FilePatch, PatchError, apply_hunks, parse_patch
from .workspace import ShadowWorkspace


def apply_patch(workspace: ShadowWorkspace, patch: str, take: bool = False) -> list[WrittenFile]:
    """Apply a unified diff to the shadow, every file or none. The hunks are applied
    outside the workspace's mutex (keystrokes never wait for a large patch); each new
    text carries the sha256 of the text it came from, which the write checks under the
    mutex. A keystroke in between: applied once more on the newer text."""
    files = parse_patch(patch)
    for attempt in range(2):
        changes = [_change(workspace, file_patch) for file_patch in files]
        try:
            return apply_changes(workspace, changes, take)
        except StaleText:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _change(workspace: ShadowWorkspace, file_patch: FilePatch) -> AgentChange:
    """What one file's patch does to the shadow; PatchError when a hunk does not apply
    (nothing is changed then)."""
    if file_patch.source is not None:
        uri = target_uri(workspace, file_patch.source)
        old = _existing(read_shadow_text(workspace, uri), file_patch.source)
        text = apply_hunks(old.text, file_patch.hunks, file_patch.path)
        return AgentRename(uri, target_uri(workspace, file_patch.path), text, old.sha256)
    uri = target_uri(workspace, file_patch.path)
    current = read_shadow_text(workspace, uri)
    if file_patch.deleted:
        _existing(current, file_patch.path)
        left = apply_hunks(current.text, file_patch.hunks, file_patch.path)
        if file_patch.hunks and left:
            raise PatchError(f"{file_patch.path}: deleted by the patch, but its hunks leave text")
        return AgentDelete(uri, current.sha256)
    if file_patch.new_file and (current.exists and current.text):
        raise PatchError(f"{file_patch.path}: the patch creates it (--- /dev/null), but it exists")
    if not file_patch.new_file:
        _existing(current, file_patch.path)
    return AgentWrite(
        uri, apply_hunks(current.text, file_patch.hunks, file_patch.path), current.sha256
    )


def _existing(current: ShadowText, name: str) -> ShadowText:
    if not current.exists:
        raise PatchError(f"{name}: no such file (a new file needs --- /dev/null)")
    return current
