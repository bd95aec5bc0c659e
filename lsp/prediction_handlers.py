"""textDocument/inlineCompletion and shadowtab/nextEdit (= textDocument/copilotInlineEdit):
predictor candidates, checked in the shadow workspace, in LSP shapes."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.inference.next_edit.candidates import MAX_CANDIDATES, Candidate
from shadowtab.lsp.convert import to_lsp_range
from shadowtab.lsp.prediction_check import checked_candidates, workspace_check
from shadowtab.lsp.predictions import PredictionCancelled
from shadowtab.shadow_workspace import Range, ShadowDocument, ShadowError

if TYPE_CHECKING:
    from shadowtab.inference.next_edit.feedback import Outcome
    from shadowtab.inference.next_edit.predictor import PredictionRequest
    from shadowtab.lsp.session import Session

INLINE_CANDIDATES = 3
NEXT_EDIT_CANDIDATES = 3  # a client may ask for up to MAX_CANDIDATES with params.n
NEXT_EDIT_ACCEPTED = "shadowtab.nextEdit.accepted"
# Notification {uri, source?, format?}: the user dismissed a shown suggestion (Esc, or
# typed something else).
REJECTED = "shadowtab/suggestionRejected"


async def inline_completion(
    session: Session, params: types.InlineCompletionParams
) -> list[types.InlineCompletionItem]:
    """Ghost text at the cursor: one item per clean candidate, best first; the editor
    cycles through them (VS Code asks again, Invoked, when the user does)."""
    uri, position = params.text_document.uri, params.position
    invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
    found = await _predict(
        session, uri, position.line, position.character, inline=True, invoked=invoked
    )
    if found is None:
        return []
    _, document, clean = found
    return [
        types.InlineCompletionItem(insert_text=c.edit.new_text, range=_lsp_range(document, c))
        for c in clean
    ]


def _lsp_range(document: ShadowDocument, candidate: Candidate) -> types.Range:
    edit = candidate.edit
    return to_lsp_range(Range(document.position_at(edit.start), document.position_at(edit.end)))


async def next_edit(session: Session, raw: Any) -> dict[str, Any]:
    """Copilot's copilotInlineEdit shape: {edits: [{range, text, textDocument, command}]},
    ranked; each edit also says its kind ("inline" | "edit" | "jump"), confidence and
    source, and a jump its location ({uri, range}: where the editor offers to go)."""
    uri, version, line, character = parse_next_edit_params(raw)
    count = _count(raw)
    session.predictions.note_next_edit_client(session)
    found = await _predict(session, uri, line, character, inline=False, count=count)
    if found is None:
        return {"edits": []}
    request, document, clean = found
    session_version = session.sync.version_of(uri)
    edits = []
    for index, candidate in enumerate(clean):
        if candidate.path and candidate.path != request.path:
            continue  # an edit of another file: not in this result shape yet
        edit = candidate.edit
        rng = Range(document.position_at(edit.start), document.position_at(edit.end))
        item: dict[str, Any] = {
            "range": rng.to_dict(),
            "text": edit.new_text,
            "textDocument": {"uri": uri, "version": session_version or version},
            "command": {
                "title": "Accept next edit",
                "command": NEXT_EDIT_ACCEPTED,
                "arguments": [
                    {
                        "uri": uri,
                        "index": index,
                        "source": candidate.source,
                        "format": candidate.format,
                    }
                ],
            },
            "kind": candidate.kind,
            "confidence": candidate.confidence,
            "source": candidate.source,
        }
        if candidate.kind == "jump":
            item["location"] = {"uri": uri, "range": Range(rng.start, rng.start).to_dict()}
        edits.append(item)
    return {"edits": edits}


def _count(raw: Any) -> int:
    """params.n: how many candidates (1..MAX_CANDIDATES), default NEXT_EDIT_CANDIDATES."""
    n = raw.get("n") if isinstance(raw, dict) else None
    if n is None:
        return NEXT_EDIT_CANDIDATES
    if not _is_int(n) or n < 1:
        raise JsonRpcInvalidParams("n must be an integer >= 1")
    return min(n, MAX_CANDIDATES)


async def _predict(
    session: Session,
    uri: str,
    line: int,
    character: int,
    inline: bool,
    count: int = 0,
    invoked: bool = False,
) -> tuple[PredictionRequest, ShadowDocument, list[Candidate]] | None:
    """Ask the predictor in a worker, keep the candidates whose names resolve (cut where
    one does not) and that add no errors; None when there is no predictor.
    ContentModified when the text changed meanwhile."""
    request = replace(_request(session, uri, line, character, inline, count), invoked=invoked)
    predictor = session.predictor
    workspace = session.sync.workspace_of(uri)
    if predictor is None or workspace is None:
        return None
    check = workspace_check(workspace, request.path, request.language_id, session.lint_cache)
    names = None
    if session.name_check is not None:
        names = session.name_check.for_document(request.path, workspace.root, request.language_id)
    clean = await checked_candidates(
        predictor, request, inline, lambda call: session.predictions.run(uri, call), check, names
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
    session: Session, uri: str, line: int, character: int, inline: bool, count: int = 0
) -> PredictionRequest:
    if session.sync.version_of(uri) is None:
        raise JsonRpcInvalidParams(f"document not open in this session: {uri}")
    count = count or (INLINE_CANDIDATES if inline else NEXT_EDIT_CANDIDATES)
    try:
        return session.predictions.request_for(session, uri, line, character, count)
    except (ValueError, ShadowError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


def rejected(session: Session, params: Any) -> None:
    feedback(session, "rejected", params)


def feedback(session: Session, outcome: Outcome, params: Any) -> None:
    """Tell the predictor what became of a suggestion it made."""
    predictor = session.predictor
    if predictor is None:
        return
    source = format_name = ""
    if isinstance(params, dict):
        source, format_name = str(params.get("source") or ""), str(params.get("format") or "")
    elif params is not None:  # pygls may hand custom params over as an object
        source = str(getattr(params, "source", "") or "")
        format_name = str(getattr(params, "format", "") or "")
    predictor.feedback(outcome, source, format_name)
