"""A session works through the services it is given: a document's workspace is looked up
once, at didOpen, and held, so neither a keystroke nor a prediction resolves a path again;
text sync is registered from the handler table like every other method."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from shadowtab.inference import EngineOptions
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.lsp import prediction_handlers
from shadowtab.lsp.handlers import METHODS
from shadowtab.lsp.hub import Hub, HubOptions
from shadowtab.lsp.session import Session
from shadowtab.lsp.settings import DebounceOptions
from shadowtab.shadow_workspace import registry

TEXT_SYNC = (
    types.TEXT_DOCUMENT_DID_OPEN,
    types.TEXT_DOCUMENT_DID_CHANGE,
    types.TEXT_DOCUMENT_DID_CLOSE,
)


@pytest.fixture
async def opened() -> AsyncIterator[tuple[Session, str]]:
    """A hub with one session that has proj/a.py open (no linters, no debounced work)."""
    base = Path(tempfile.mkdtemp(prefix="stsvc-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    path = root / "a.py"
    path.write_text("x = 1\n")
    options = HubOptions(
        state_dir=base / "state",
        engine=EngineOptions(kind="off"),
        linters={},
        debounce=DebounceOptions(lint_ms=100_000, warm_ms=100_000),
        predictor=FixedPredictor(inline_texts=["z"]),
    )
    hub = Hub(options)
    await hub.start()
    session = hub._new_session()
    uri = path.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text="x = 1\n")
    session.protocol._handle_notification(
        types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item)
    )
    hub.workspaces.diagnostics.cancel(uri)  # didOpen's lint (its own lookups) is not measured
    try:
        yield session, uri
    finally:
        await hub.close()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The uris the workspace registry looks up (each resolves the path) from now on."""
    seen: list[str] = []
    original = registry.Workspaces.for_uri

    def counted(self: registry.Workspaces, uri: str) -> object:
        seen.append(uri)
        return original(self, uri)

    monkeypatch.setattr(registry.Workspaces, "for_uri", counted)
    return seen


def _keystroke(uri: str, version: int) -> types.DidChangeTextDocumentParams:
    at = types.Position(line=0, character=5)
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[
            types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="2")
        ],
    )


async def test_a_keystroke_looks_up_no_workspace(
    opened: tuple[Session, str], lookups: list[str]
) -> None:
    session, uri = opened
    session.protocol._handle_notification(types.TEXT_DOCUMENT_DID_CHANGE, _keystroke(uri, 2))
    document = session.sync.document(uri)
    assert document is not None and document.text == "x = 12\n"
    assert lookups == []


async def test_a_prediction_looks_up_no_workspace(
    opened: tuple[Session, str], lookups: list[str]
) -> None:
    session, uri = opened
    params = types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=0, character=5),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
    )
    items = await prediction_handlers.inline_completion(session, params)
    assert [item.insert_text for item in items] == ["z"]
    raw = {"textDocument": {"uri": uri, "version": 1}, "position": {"line": 0, "character": 5}}
    await prediction_handlers.next_edit(session, raw)
    assert lookups == []


async def test_text_sync_is_registered_from_the_handler_table(
    opened: tuple[Session, str],
) -> None:
    """Through pygls' feature table like every other method (SessionProtocol's own
    built-ins for these only pass them on, keeping no copy of the text); and a
    didClose sent through pygls reaches the shadow."""
    session, uri = opened
    assert set(TEXT_SYNC) <= {method.name for method in METHODS}
    assert set(TEXT_SYNC) <= set(session.protocol.fm.features)
    session.protocol._handle_notification(
        types.TEXT_DOCUMENT_DID_CLOSE,
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)),
    )
    assert session.sync.document(uri) is None
