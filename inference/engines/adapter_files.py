"""The `engine.adapter` setting, shared by the local engines: which LoRA adapter file it
names ("default": the packaged one, for the packaged model only), the GGUF key naming
the prompt format an adapter was trained on, and the error an unusable adapter raises.

No engine's native library is imported here: the llama.cpp engine, the torch engine and
`shadowtab adapter export-peft` all resolve the setting the same way."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from .api import EngineError

SETTING = "engine.adapter"
DEFAULT = "default"
NONE = "none"
# Shipped in the package, trained by training/ for the packaged base model.
PACKAGED_DIR = Path(__file__).resolve().parent.parent / "adapters"
PACKAGED_FILE = "shadowtab-next-edit.lora.gguf"
# The GGUF key naming the next-edit prompt format an adapter was trained on (written by
# training/export.py): the predictor renders its prompts in that format.
FORMAT_KEY = "shadowtab.next_edit.format"
GGUF_MAGIC = b"GGUF"


class AdapterError(EngineError):
    """The configured adapter cannot be used; the message names the setting."""


@dataclass(frozen=True)
class AdapterChoice:
    path: Path | None  # None: serve the base model alone
    setting: str  # the value as configured, for messages and status


def packaged_adapter() -> Path | None:
    path = PACKAGED_DIR / PACKAGED_FILE
    return path if path.is_file() else None


def resolve(setting: str | None, custom_model: bool) -> AdapterChoice:
    """ "default": the packaged adapter, for the packaged model only (it was trained for
    that base) and only if the package has one; "none": no adapter; else a path."""
    value = setting or DEFAULT
    if value == NONE:
        return AdapterChoice(None, value)
    if value == DEFAULT:
        return AdapterChoice(None if custom_model else packaged_adapter(), value)
    return AdapterChoice(Path(value).expanduser(), value)


def is_gguf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == GGUF_MAGIC


def check_gguf_file(path: Path) -> None:
    if not path.is_file():
        raise AdapterError(f"{SETTING} = {str(path)!r}: file not found")
    if not is_gguf(path):
        raise AdapterError(f"{SETTING} = {str(path)!r}: not a GGUF LoRA adapter file")


def check_format(path: Path, prompt_format: str | None, formats: Collection[str] | None) -> None:
    """An adapter trained on a prompt format the predictor cannot render is refused."""
    if formats is None or prompt_format is None or prompt_format in formats:
        return
    known = ", ".join(sorted(formats))
    raise AdapterError(
        f"{SETTING} = {str(path)!r}: trained on the prompt format {prompt_format!r}, "
        f"which this version cannot render (known: {known})"
    )
