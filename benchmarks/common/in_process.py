"""An evaluation case as the predictor sees it, in-process (no server): the request the
language server builds after the case's keystrokes, and the engine the daemon loads."""

from __future__ import annotations

from pathlib import Path

from shadowtab.inference import Engine, EngineOptions, create_engine
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import PredictionRequest

from training.edit_scoring import apply_edit
from training.eval_cases import Case

ROOT = "/tmp/st-eval/root/case"  # the server sees an absolute path; so does the prompt
KEY_SECONDS = 0.05  # the events' clock: one key every 50 ms


def request_of(case: Case) -> PredictionRequest:
    """The request the server builds after the case's keystrokes (one event a key)."""
    path = f"{ROOT}/{case.path}"
    events = [
        Edit(path, KEY_SECONDS * i, step.start, case_text_slice(case, i), step.new_text)
        for i, step in enumerate(case.steps)
    ]
    return PredictionRequest(path, "python", case.current, case.cursor, events, 1)


def case_text_slice(case: Case, index: int) -> str:
    """The text step `index` replaced (in the text just before it)."""
    text = case.opened
    for step in case.steps[:index]:
        text = apply_edit(text, step.start, step.end, step.new_text)
    step = case.steps[index]
    return text[step.start : step.end]


def daemon_engine(threads: int, data_dir: Path | None) -> Engine:
    """The packaged model with its adapter merged, as the daemon loads it by default."""
    options = EngineOptions(threads=threads, weights="auto", merge_adapter=True, process="inline")
    if data_dir is not None:
        options.data_dir = data_dir
    return create_engine(options)
