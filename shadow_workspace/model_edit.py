"""What a model edit did (ShadowWorkspace.apply_model_edit, the agents' writes)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ModelEditResult:
    """What apply_model_edit did: `written` when the user holds the lock and the file was
    committed; `conflict` when that commit was refused (the edit stays in the shadow)."""

    uri: str
    version: int
    holder: str
    written: bool
    pending: bool
    conflict: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def to_eol(text: str, eol: str) -> str:
    """`text` with the file's line endings (the model writes \\n)."""
    return text.replace("\r\n", "\n").replace("\n", eol)
