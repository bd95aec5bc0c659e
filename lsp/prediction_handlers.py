"""textDocument/inlineCompletion and shadowtab/nextEdit (= textDocument/copilotInlineEdit):
predictor candidates, checked in the shadow workspace, in LSP shapes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.lsp.convert import to_lsp_range
from shadowtab.lsp.prediction_check import TextCandidate, keep_clean
from shadowtab.shadow_workspace import Range, ShadowError

if TYPE_CHECKING:
    from shadowtab.inference.predictor import PredictionRequest
    from shadowtab.lsp.session import Session

INLINE_CANDIDATES = 3
NEXT_EDIT_CANDIDATES = 1
NEXT_EDIT_ACCEPTED = "shadowtab.nextEdit.accepted"


async def inline_completion(
    session: Session, params: types.InlineCompletionParams
) -> list[types.InlineCompletionItem]:
    uri = params.text_document.uri
    predictor = session.hub.predictor
    request = _request(session, uri, params.position.line, params.position.character, True)
    if predictor is None or request is None:
        return []
    service = session.hub.predictions
    found = await service.run(uri, lambda cancel: predictor.inline(request, cancel))
    candidates = [TextCandidate(request.cursor, request.cursor, c.text) for c in found]
    clean = await _keep_clean(session, uri, request, candidates)
    document = session.hub.workspaces.for_uri(uri).document(uri)
    if document is None:
        return []
    cursor = document.position_at(request.cursor)
    rng = to_lsp_range(Range(cursor, cursor))
    return [types.InlineCompletionItem(insert_text=c.new_text, range=rng) for c in clean]


async def next_edit(session: Session, raw: Any) -> dict[str, Any]:
    """Copilot's copilotInlineEdit shape: {edits: [{range, text, textDocument, command}]}."""
    uri, version, line, character = parse_next_edit_params(raw)
    predictor = session.hub.predictor
    request = _request(session, uri, line, character, False)
    if predictor is None or request is None:
        return {"edits": []}
    service = session.hub.predictions
    found = await service.run(uri, lambda cancel: predictor.next_edit(request, cancel))
    candidates = [TextCandidate(c.start, c.end, c.new_text) for c in found]
    clean = await _keep_clean(session, uri, request, candidates)
    document = session.hub.workspaces.for_uri(uri).document(uri)
    if document is None:
        return {"edits": []}
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
    line, character = position.get("line"), position.get("character")
    if not _is_int(line) or not _is_int(character) or line < 0 or character < 0:
        raise JsonRpcInvalidParams("position.line and position.character: integers >= 0")
    return document["uri"], version, line, character


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _request(
    session: Session, uri: str, line: int, character: int, inline: bool
) -> PredictionRequest | None:
    if session.sync.version_of(uri) is None:
        raise JsonRpcInvalidParams(f"document not open in this session: {uri}")
    count = INLINE_CANDIDATES if inline else NEXT_EDIT_CANDIDATES
    try:
        return session.hub.predictions.request_for(session, uri, line, character, count)
    except (ValueError, ShadowError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


async def _keep_clean(
    session: Session, uri: str, request: PredictionRequest, candidates: list[TextCandidate]
) -> list[TextCandidate]:
    workspace = session.hub.workspaces.for_uri(uri)
    verdicts = await keep_clean(
        workspace, request.path, request.text, request.language_id, candidates
    )
    return [c for c, ok in zip(candidates, verdicts, strict=True) if ok]
