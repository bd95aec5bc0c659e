"""Runs evaluation cases against the real server: the Hub (engine, predictor, shadow
workspace, lint gate) built as `shadowtab lsp --standalone` builds it, one LSP session,
and per case the editor's open / edit / pause / ask sequence."""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from shadowtab.inference.next_edit.propagation.propagation import CompletedEdit, propagate
from shadowtab.inference.next_edit.propagation.propagation_gate import gate_at

from benchmarks.common.eval_lsp import (
    CURSOR_MOVED,
    LspClient,
    change_params,
    connect,
    cursor_moved_params,
    initialize_params,
    offset_of,
    position,
)
from benchmarks.common.eval_report import Observation, Suggestion
from benchmarks.common.project_trees import lay_out
from training.edit_scoring import apply_edit, judge, judge_line
from training.eval_cases import Case, line_rest
from training.project_cases import ProjectCase

LOAD_TIMEOUT_S = 600
INDEX_TIMEOUT_S = 120  # a project's index is built before its case is typed


@dataclass(frozen=True)
class Variant:
    """One model configuration to evaluate: EngineOptions fields, the `[next_edit]
    format` (None: auto, the adapter's) and the confidence threshold."""

    options: dict[str, Any]
    adapter: str | None
    format: str | None
    min_confidence: float = 0.0
    token_threshold: float | None = None  # [next_edit] token_threshold; None: the default
    ghost_gate: bool | None = None  # [next_edit] gate; None: the default
    context_tokens: int | None = None  # [next_edit] context_tokens; None: the default


@dataclass(frozen=True)
class Pauses:
    after_open_s: float
    before_ask_s: float
    keystroke_s: float


def variants(
    model: str | None,
    adapters: list[str] | None,
    formats: list[str] | None,
    threads: int,
    min_confidence: float = 0.0,
    engine: dict[str, Any] | None = None,
    token_threshold: float | None = None,
    ghost_gate: bool | None = None,
    context_tokens: list[int] | None = None,
) -> list[Variant]:
    """Every adapter x format x context budget asked for, each on the same cases (side
    by side).
    adapter: "default" (the packaged one), "none" or a GGUF path; format: a registered
    name or "auto"; `engine`: further EngineOptions fields for all of them."""
    chosen = []
    budgets: list[int | None] = list(context_tokens) if context_tokens else [None]
    for adapter in adapters or ["default"]:
        for fmt in formats or ["auto"]:
            options: dict[str, Any] = {"kind": "llama.cpp", "threads": threads, **(engine or {})}
            if model:
                options["model_path"] = model
            options["adapter"] = adapter
            chosen += [
                Variant(options, adapter, fmt, min_confidence, token_threshold, ghost_gate, b)
                for b in budgets
            ]
    return chosen


async def start_hub(
    variant: Variant,
    scratch: Path,
    data_dir: Path,
    predictor: Any = None,
    client_class: Any = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """The Hub with the model loaded, one initialized session (an LspClient, or a
    `client_class` one), and what it runs. `predictor`: a stand-in instead of the model
    (the harness's own tests)."""
    from shadowtab.inference import EngineOptions
    from shadowtab.inference.next_edit.settings import NextEditOptions
    from shadowtab.lsp.hub import Hub, HubOptions
    from shadowtab.shadow_workspace import DEFAULT_LINTERS

    options = {**variant.options, "kind": "off"} if predictor is not None else variant.options
    engine = EngineOptions(**options, data_dir=data_dir)
    linters = dict(DEFAULT_LINTERS)
    # only when asked for: the evaluation also runs against code without the setting
    chosen: dict[str, Any] = {}
    if variant.token_threshold is not None:
        chosen["token_threshold"] = variant.token_threshold
    if variant.ghost_gate is not None:
        chosen["gate"] = variant.ghost_gate
    if variant.context_tokens is not None:
        chosen["context_tokens"] = variant.context_tokens
    hub = Hub(
        HubOptions(
            state_dir=scratch / "state",
            engine=engine,
            linters=linters,
            predictor=predictor,
            next_edit=NextEditOptions(
                format=variant.format or "auto", min_confidence=variant.min_confidence, **chosen
            ),
        )
    )
    await hub.start()
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while hub.engine_host.state == "loading" and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    if hub.engine_host.state not in ("ready", "off"):
        await hub.close()
        raise RuntimeError(f"the model did not load: {hub.engine_host.error}")
    root = scratch / "root"
    (root / ".git").mkdir(parents=True)
    client, _ = await connect(hub, client_class)
    await client.call("initialize", initialize_params(root.as_uri()))
    client.notify("initialized", {})
    loaded = hub.engine_host.get_engine()
    stats = loaded.stats() if loaded else {}
    model_source = getattr(hub.predictor, "model", None)  # EnginePredictor's ModelSource
    described = {
        "model": Path(str(stats.get("model", "?"))).name,
        "adapter": Path(str(stats["adapter"])).name if stats.get("adapter") else None,
        "adapter_error": stats.get("adapter_error"),
        "format": model_source.format.name if model_source is not None else None,
        "token_threshold": getattr(
            getattr(hub.predictor, "_completion", None), "token_threshold", None
        ),
        "ghost_gate": getattr(hub.predictor, "ghost_gate_state", None),
        "context_tokens": hub.predictions.context.budget_tokens,
    }
    return hub, client, described


class CaseRunner:
    """Runs cases one after another in one session. A case alone is written under
    `root` (the session's workspace); a ProjectCase is laid out in a project of its own
    beside it (projects_dir), whose workspace the server opens, indexes and, once the
    case is scored, closes."""

    def __init__(
        self,
        hub: Any,
        client: LspClient,
        root: Path,
        pauses: Pauses,
        projects_dir: Path | None = None,
    ) -> None:
        self.hub, self.client, self.root, self.pauses = hub, client, root, pauses
        self.projects_dir = projects_dir or root.parent / "projects"
        self.count = 0

    async def run(self, case: Case | ProjectCase) -> dict[str, Observation]:
        self.count += 1
        if isinstance(case, ProjectCase):
            project_root = self.projects_dir / f"case{self.count}"
            path = await asyncio.to_thread(lay_out, case, project_root)
            try:
                return await self._run(case.case, path, project_root)
            finally:
                self.hub.workspaces.close_root(project_root)
                await asyncio.to_thread(shutil.rmtree, project_root, True)
        path = self.root / f"case{self.count}" / case.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.opened, encoding="utf-8")
        return await self._run(case, path, None)

    async def _run(
        self, case: Case, path: Path, project_root: Path | None
    ) -> dict[str, Observation]:
        uri = path.as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": case.opened}
        self.client.notify("textDocument/didOpen", {"textDocument": document})
        if project_root is not None:  # the user has had the project open for a while
            workspace = self.hub.workspaces.for_root(str(project_root))
            await asyncio.to_thread(workspace.index.wait_ready, INDEX_TIMEOUT_S)
        if case.steps:  # the cursor comes to rest where the user will type, as editors say
            start = case.steps[0].start
            self.client.notify(CURSOR_MOVED, cursor_moved_params(uri, case.opened, start))
        await asyncio.sleep(self.pauses.after_open_s)
        version = await self._type(uri, case)
        await asyncio.sleep(self.pauses.before_ask_s)
        if case.mode == "line":  # line completion: ghost text alone, as VS Code asks it
            ghost = await self._inline(uri, case)
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            return {"ghost_text": replace(ghost, remaining=len(line_rest(case)))}
        observed = {
            "ghost_text": await self._inline(uri, case),
            "next_edit": await self._next_edit(uri, version, case),
        }
        if case.mode == "next_hunk":
            observed["propagation"] = self._propagation(case, observed["next_edit"])
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return observed

    async def _type(self, uri: str, case: Case) -> int:
        text, version = case.opened, 1
        for step in case.steps:
            version += 1
            self.client.notify("textDocument/didChange", change_params(uri, version, text, step))
            text = apply_edit(text, step.start, step.end, step.new_text)
            await asyncio.sleep(self.pauses.keystroke_s)
        assert text == case.current, "the case's steps do not produce its text"
        return version

    async def _inline(self, uri: str, case: Case) -> Observation:
        params = {
            "context": {"triggerKind": 1},
            "textDocument": {"uri": uri},
            "position": position(case.current, case.cursor),
        }
        reply, seconds, reuse = await self._timed("textDocument/inlineCompletion", params)
        result = reply.get("result")
        items = result.get("items", []) if isinstance(result, dict) else result or []
        found = []
        for item in items:
            text = item.get("insertText")
            if not isinstance(text, str):
                continue
            start = end = case.cursor
            if isinstance(item.get("range"), dict):
                start = offset_of(case.current, item["range"]["start"])
                end = offset_of(case.current, item["range"]["end"])
            found.append(_judged(case, start, end, text, item.get("confidence")))
        return Observation(found, seconds, reuse, error=_error(reply))

    async def _next_edit(self, uri: str, version: int, case: Case) -> Observation:
        params = {
            "textDocument": {"uri": uri, "version": version},
            "position": position(case.current, case.cursor),
        }
        reply, seconds, reuse = await self._timed("shadowtab/nextEdit", params)
        result = reply.get("result")
        edits = result.get("edits", []) if isinstance(result, dict) else []
        found = [
            _judged(
                case,
                offset_of(case.current, e["range"]["start"]),
                offset_of(case.current, e["range"]["end"]),
                e.get("text", ""),
                e.get("confidence"),
                e.get("source"),
            )
            for e in edits
            if e.get("textDocument", {}).get("uri", uri) == uri
        ]
        return Observation(found, seconds, reuse, error=_error(reply))

    def _propagation(self, case: Case, server: Observation) -> Observation:
        """Propagation's candidates: the server's, when it labels them; else direct."""
        labelled = [s for s in server.suggestions if s.source == "propagation"]
        if labelled:
            return Observation(labelled, server.seconds, None)
        return propagation_observation(case)

    async def _timed(
        self, method: str, params: Any
    ) -> tuple[dict[str, Any], float, tuple[int, int]]:
        before = self._totals()
        started = time.perf_counter()
        reply = await self.client.call(method, params)
        seconds = time.perf_counter() - started
        after = self._totals()
        reuse = (
            int(after.get("prompt_tokens", 0) - before.get("prompt_tokens", 0)),
            int(after.get("reused_prompt_tokens", 0) - before.get("reused_prompt_tokens", 0)),
        )
        return reply, seconds, reuse

    def _totals(self) -> dict[str, float]:
        engine = self.hub.engine_host.get_engine()
        totals = engine.stats().get("totals", {}) if engine is not None else {}
        return dict(totals)

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.client.call("shutdown", None), 10)
            self.client.notify("exit", None)
        except (TimeoutError, ConnectionError):
            pass


def propagation_observation(case: Case, max_candidates: int = 3) -> Observation:
    """Propagation called in-process on the case's completed edit (the first hunk), with
    the gate the predictor uses (propagation_source.py)."""
    started = time.perf_counter()
    edit = CompletedEdit.from_texts(case.path, case.opened, case.current)
    gate, _ = gate_at()
    found = propagate(edit, {case.path: case.current}, max_candidates=max_candidates, gate=gate)
    seconds = time.perf_counter() - started
    # getattr: side_by_side.py also runs this against code from before propagation
    # returned Candidates (the edit's fields were the candidate's own then)
    edits: list[Any] = [getattr(c, "edit", c) for c in found]
    judged = [
        _judged(case, e.start, e.end, e.new_text, c.confidence, c.source)
        for c, e in zip(found, edits, strict=True)
    ]
    return Observation(judged, seconds, None, direct=True)


def _judged(
    case: Case, start: int, end: int, text: str, confidence: Any, source: Any = None
) -> Suggestion:
    if case.mode == "line":
        verdict = judge_line(line_rest(case), case.cursor, start, end, text)
    else:
        applied = apply_edit(case.current, start, end, text)
        verdict = judge(case.current, applied, case.target, case.exact_texts, start + len(text))
    return Suggestion(
        verdict=verdict,
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        source=source if isinstance(source, str) else None,
        edit=(start, end, text),
    )


def _error(reply: dict[str, Any]) -> str | None:
    error = reply.get("error")
    return str(error.get("message", error)) if isinstance(error, dict) else None
