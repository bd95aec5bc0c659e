"""What every LSP session of one daemon shares, and the composition root that builds it:
`build_services` makes the engine host, the prediction service, the workspace registry
(with its diagnostics publisher), the lint cache and the command runner, wires each to
the others, and returns them as the `SessionServices` each session is handed. Sessions
and services reach each other through these objects, never through the hub.

The services are named by their classes; sessions appear in them as `Peer`s (peer.py
says why that one protocol remains)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Collection
from dataclasses import dataclass

from shadowtab.lsp.commands import CommandRunner
from shadowtab.lsp.diagnostics import DiagnosticsPublisher
from shadowtab.lsp.engine_host import EngineHost
from shadowtab.lsp.name_check import NameCheck
from shadowtab.lsp.options import HubOptions
from shadowtab.lsp.peer import Peer
from shadowtab.lsp.prediction_check import LintCache
from shadowtab.lsp.predictions import PredictionService
from shadowtab.lsp.workspace_registry import WorkspaceRegistry

# Server-side times of keystrokes kept for the stats (shadow edit + forwarding it).
TEXT_SYNC_SAMPLES = 4096


@dataclass(frozen=True)
class SessionServices:
    """Everything a session uses of what the sessions share (build_services makes it)."""

    workspaces: WorkspaceRegistry
    peers: Collection[Peer]  # the daemon's sessions, live: who shows a document
    lints: DiagnosticsPublisher
    predictions: PredictionService
    lint_cache: LintCache
    name_check: NameCheck | None  # None: `[next_edit] check_names = false`
    engine: EngineHost
    commands: CommandRunner
    client_events: Counter[str]  # didShowInlineEdit, accepted edits...
    text_sync_ms: deque[float]  # server time of each keystroke (echoes not counted)


def build_services(options: HubOptions, peers: Collection[Peer]) -> SessionServices:
    """The composition root of the LSP side: every shared service, built once per daemon
    from `options`. `peers` is the (live) collection of sessions the services notify."""
    engine = EngineHost(options.engine, options.next_edit, options.predictor, options.worker_policy)
    predictions = PredictionService(
        engine,
        options.debounce.warm_ms / 1000,
        options.limits.prediction_wait_s,
        options.next_edit.context_tokens,
    )
    workspaces = WorkspaceRegistry(peers, predictions, options)
    return SessionServices(
        workspaces=workspaces,
        peers=peers,
        lints=workspaces.diagnostics,
        predictions=predictions,
        lint_cache=LintCache(),  # the unchanged text's lint, between two keystrokes
        name_check=_name_check(options),
        engine=engine,
        commands=CommandRunner(workspaces),
        client_events=Counter(),
        text_sync_ms=deque(maxlen=TEXT_SYNC_SAMPLES),
    )


def _name_check(options: HubOptions) -> NameCheck | None:
    if not options.next_edit.check_names:
        return None
    return NameCheck(options.next_edit.check_names_ms / 1000)
