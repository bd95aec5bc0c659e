"""`shadowtab adapter export-peft`: the packaged adapter as a peft directory (its content
is checked against peft in tests/engines/test_torch_adapter.py), bad input named; and
the status line saying which adapter runs and in which prompt format."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from shadowtab.daemon.cli.daemon import _adapter_line
from shadowtab.daemon.cli.main import main

needs_torch_extra = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("gguf", "peft", "safetensors")),
    reason="export-peft needs the torch extra (pip install 'shadowtab[torch]')",
)


@needs_torch_extra
def test_export_peft_writes_the_packaged_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "next-edit"
    assert main(["adapter", "export-peft", str(target)]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert json.loads((target / "adapter_config.json").read_text())["r"] == 8
    about = json.loads((target / "shadowtab-adapter.json").read_text())
    assert about["shadowtab.next_edit.format"] == "shadowtab"


@needs_torch_extra
@pytest.mark.parametrize("bad", ["adapter", "base"])
def test_export_peft_names_what_is_wrong(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"PK\x03\x04 not a gguf file" * 4)
    code = main(["adapter", "export-peft", str(tmp_path / "out"), f"--{bad}", str(junk)])
    assert code == 1
    error = capsys.readouterr().err
    assert str(junk) in error
    if bad == "adapter":
        assert "engine.adapter" in error and "not a GGUF LoRA adapter file" in error
    assert not (tmp_path / "out" / "adapter_model.safetensors").exists()


def test_the_status_line_names_adapter_format_and_error() -> None:
    assert _adapter_line({}) == "none (base model only)"
    served = {"adapter": "next-edit (a LoRA adapter on smollm2, applied by the server)",
              "adapter_format": "shadowtab"}  # fmt: skip
    assert _adapter_line(served).endswith("server), prompt format shadowtab")
    failed = {"adapter": None, "adapter_error": "engine.adapter = 'x': file not found"}
    assert _adapter_line(failed) == "none (base model only) (engine.adapter = 'x': file not found)"
