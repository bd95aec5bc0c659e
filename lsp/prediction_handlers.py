"""textDocument/inlineCompletion and shadowtab/nextEdit (= textDocument/copilotInlineEdit):
predictor candidates, checked in the shadow workspace, in LSP shapes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.inference.next_edit.predictor import EditCandidate, checked_candidates
from shadowtab.lsp.convert import to_lsp_range
from shadowtab.lsp.prediction_check import workspace_check
from shadowtab.lsp.predictions import PredictionCancelled
from shadowtab.shadow_workspace import Range, ShadowDocument, ShadowError

if TYPE_CHECKING:
    from shadowtab.inference.next_edit.predictor import PredictionRequest
    from shadowtab.lsp.session import Session

INLINE_CANDIDATES = 3
NEXT_EDIT_CANDIDATES = 1
NEXT_EDIT_ACCEPTED = "shadowtab.nextEdit.accepted"


async def inline_completion(
    session: Session, params: types.InlineCompletionParams
) -> list[types.InlineCompletionItem]:
    """Ghost text at the cursor: one item per clean candidate, best first."""
    uri, position = params.text_document.uri, params.position
    found = await _predict(session, uri, position.line, position.character, inline=True)
    if found is None:
        return []
    request, document, clean = found
    cursor = document.position_at(request.cursor)
    rng = to_lsp_range(Range(cursor, cursor))
    return [types.InlineCompletionItem(insert_text=c.new_text, range=rng) for c in clean]


async def next_edit(session: Session, raw: Any) -> dict[str, Any]:
    """Copilot's copilotInlineEdit shape: {edits: [{range, text, textDocument, command}]}."""
    uri, version, line, character = parse_next_edit_params(raw)
    found = await _predict(session, uri, line, character, inline=False)
    if found is None:
        return {"edits": []}
    _, document, clean = found
    session_version = session.sync.version_of(uri)
    edits = []
    for index, candidate in enumerate(clean):
        rng = Range(document.position_at(candidate.start), document.position_at(candidate.end))
        edits.append(
            {
                "range": rng.to_dict(),
                "text": candidate.new_text,
                "textDocument": {"uri": uri, "version": session_version or version},
                "command": {
                    "title": "Accept next edit",
                    "command": NEXT_EDIT_ACCEPTED,
                    "arguments": [{"uri": uri, "index": index}],
                },
            }
        )
    return {"edits": edits}


async def _predict(
    session: Session, uri: str, line: int, character: int, inline: bool
) -> tuple[PredictionRequest, ShadowDocument, list[EditCandidate]] | None:
    """Ask the predictor in a worker, keep the candidates that add no errors; None when
    there is no predictor. ContentModified when the text changed meanwhile."""
    request = _request(session, uri, line, character, inline)
    predictor = session.hub.predictor
    if predictor is None:
        return None
    workspace = session.hub.workspaces.for_uri(uri)
    check = workspace_check(workspace, request.path, request.language_id, session.hub.lint_cache)
    clean = await checked_candidates(
        predictor, request, inline, lambda call: session.hub.predictions.run(uri, call), check
    )
    document = workspace.document(uri)
    if document is None or document.text != request.text:
        raise PredictionCancelled(f"{uri} changed; prediction dropped")
    return request, document, clean


def parse_next_edit_params(raw: Any) -> tuple[str, int | None, int, int]:
    """(uri, version, line, character) from the params dict, or InvalidParams."""
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("params must be {textDocument: {uri, version}, position}")
    document = raw.get("textDocument")
    position = raw.get("position")
    if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
        raise JsonRpcInvalidParams("textDocument.uri must be a string")
    version = document.get("version")
    if version is not None and not _is_int(version):
        raise JsonRpcInvalidParams("textDocument.version must be an integer")
    if not isinstance(position, dict):
        raise JsonRpcInvalidParams("position must be {line, character}")
    line, character = _natural(position.get("line")), _natural(position.get("character"))
    if line is None or character is None:
        raise JsonRpcInvalidParams("position.line and position.character: integers >= 0")
    return document["uri"], version, line, character


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _natural(value: Any) -> int | None:
    return value if _is_int(value) and value >= 0 else None


def _request(
    session: Session, uri: str, line: int, character: int, inline: bool
) -> PredictionRequest:
    if session.sync.version_of(uri) is None:
        raise JsonRpcInvalidParams(f"document not open in this session: {uri}")
    count = INLINE_CANDIDATES if inline else NEXT_EDIT_CANDIDATES
    try:
        return session.hub.predictions.request_for(session, uri, line, character, count)
    except (ValueError, ShadowError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
