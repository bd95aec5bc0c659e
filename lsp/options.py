"""HubOptions: what one daemon's LSP side is configured with (the daemon's config builds
it from the settings; tests and `lsp --standalone` build it directly). Its setting
sections are named as in shadowtab.toml (`options.limits.document_mb` is
`limits.document_mb`) and default to the settings table's values."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shadowtab.inference.next_edit.settings import NextEditOptions
from shadowtab.lsp.settings import DebounceOptions, LimitsOptions

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
    debounce: DebounceOptions = field(default_factory=DebounceOptions)
    limits: LimitsOptions = field(default_factory=LimitsOptions)
    next_edit: NextEditOptions = field(default_factory=NextEditOptions)
    predictor: Predictor | None = None  # None: EnginePredictor over the engine
    worker_policy: WorkerPolicy | None = None  # None: the defaults (tests shorten them)
