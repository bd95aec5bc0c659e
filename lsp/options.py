"""HubOptions: what one daemon's LSP side is configured with (the daemon's config builds
it from the settings; tests and `lsp --standalone` build it directly)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shadowtab.inference.next_edit.token_confidence import DEFAULT_TOKEN_THRESHOLD
from shadowtab.shadow_workspace.linting import DEFAULT_LINT_MAX_MB

if TYPE_CHECKING:
    from shadowtab.inference import EngineOptions
    from shadowtab.inference.engines.worker import WorkerPolicy
    from shadowtab.inference.next_edit.predictor import Predictor
    from shadowtab.shadow_workspace import LinterSpec


@dataclass
class HubOptions:
    state_dir: Path
    engine: EngineOptions
    linters: dict[str, LinterSpec] = field(default_factory=dict)
    lint_debounce_ms: int = 150
    warm_debounce_ms: int = 100
    predictor: Predictor | None = None
    max_document_mb: float = 50  # larger documents are refused with a message
    lint_max_mb: float = DEFAULT_LINT_MAX_MB  # larger documents are not linted
    # a prediction still waiting for the model after this long is dropped (ContentModified)
    prediction_wait_s: float = 10.0
    next_edit_format: str = "auto"
    min_confidence: float = 0.0
    token_threshold: float = DEFAULT_TOKEN_THRESHOLD
    ghost_gate: bool = True  # [next_edit] gate
    worker_policy: WorkerPolicy | None = None  # None: the defaults (tests shorten them)
