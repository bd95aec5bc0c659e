"""shadowtab.shadow.applyEdit: a WorkspaceEdit from the model goes into the shadow (and to
disk only when the user holds the lock); editors showing the documents get the edit
pushed with workspace/applyEdit so their buffers stay equal to the shadow."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.lsp.convert import edits_to_changes
from shadowtab.lsp.edits_push import push_text
from shadowtab.shadow_workspace import uri_to_path

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session
    from shadowtab.shadow_workspace import ShadowWorkspace, TextChange


def parse_workspace_edit(session: Session, raw: Any) -> dict[str, list[TextChange]]:
    """uri -> shadow changes (last first), or InvalidParams."""
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("the argument must be a WorkspaceEdit object")
    try:
        edit = session.protocol._converter.structure(raw, types.WorkspaceEdit)
    except Exception as exc:
        raise JsonRpcInvalidParams(f"not a WorkspaceEdit: {exc}") from exc
    per_uri: dict[str, list[types.TextEdit]] = {}
    for uri, edits in (edit.changes or {}).items():
        per_uri.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if not isinstance(change, types.TextDocumentEdit):
            raise JsonRpcInvalidParams("file create/rename/delete is not supported")
        text_edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
        per_uri.setdefault(change.text_document.uri, []).extend(text_edits)
    if not per_uri:
        raise JsonRpcInvalidParams("the WorkspaceEdit has no text edits")
    try:
        return {uri: edits_to_changes(edits) for uri, edits in per_uri.items()}
    except ValueError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


def editable_workspace(session: Session, uri: str) -> ShadowWorkspace:
    """The workspace the model may edit `uri` in: a `file:` URI inside one of the
    session's workspace folders or inside the root of a document the session has open.
    Opens no new workspace; InvalidParams otherwise."""
    try:
        real = uri_to_path(uri).resolve()
    except (ValueError, OSError) as exc:
        raise JsonRpcInvalidParams(f"{uri}: {exc}") from exc
    registry = session.workspaces
    roots = [Path(root).resolve() for root in session.folder_roots()]
    roots += [ws.root for ws in session.open_document_workspaces()]
    if not any(real == root or root in real.parents for root in roots):
        raise JsonRpcInvalidParams(f"{uri}: outside the workspace folders of this editor")
    workspace = registry.containing(real)
    if workspace is None:
        raise JsonRpcInvalidParams(f"{uri}: no shadowtab workspace holds it")
    return workspace


async def apply_workspace_edit(session: Session, raw: Any) -> dict[str, Any]:
    changes = parse_workspace_edit(session, raw)
    # Every target is checked before the first edit lands: a bad one writes nothing.
    targets = {uri: editable_workspace(session, uri) for uri in changes}
    results: dict[str, Any] = {}
    for uri, uri_changes in changes.items():
        try:
            workspace = targets[uri]
            shown = workspace.document(uri)
            before = shown.text if shown is not None and shown.open else None
            result = workspace.apply_model_edit(uri, uri_changes)
        except (ValueError, KeyError, OSError) as exc:
            raise JsonRpcInvalidParams(f"{uri}: {exc}") from exc
        results[uri] = _describe(result)
        session.lints.schedule(uri, delay_s=0)
        session.predictions.on_document_changed(uri)
        document = workspace.document(uri)
        if document is None or before is None:
            continue  # no editor shows it
        for other in session.workspaces.sessions_with(uri):
            push_text(other, uri, before, document.text)
    return {"applied": True, "results": results}


def _describe(result: Any) -> Any:
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if result is None or isinstance(result, (str, int, float, bool, list, dict)):
        return result
    return str(result)
