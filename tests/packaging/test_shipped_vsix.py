"""The VS Code extension that ships in the package (editors/vscode/shadowtab.vsix) was built
from the extension's current source: the build (scripts/build_vsix.py) records the source's
hash inside the .vsix, and a source file changed without rebuilding fails here."""

from __future__ import annotations

import importlib.util
import json
import shutil
import zipfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
REBUILD = "rebuild it: python scripts/build_vsix.py (see its docstring), then commit the .vsix"


def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_vsix", ROOT / "scripts" / "build_vsix.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = build_script()


def test_the_shipped_vsix_was_built_from_the_current_source() -> None:
    assert BUILD.VSIX.is_file(), f"{BUILD.VSIX} is missing: {REBUILD}"
    recorded, current = BUILD.recorded_hash(), BUILD.source_hash()
    assert recorded == current, (
        f"{BUILD.VSIX.name} was built from other source than editors/vscode holds now "
        f"(recorded {recorded or 'no hash'}, source {current}): {REBUILD}"
    )
    with zipfile.ZipFile(BUILD.VSIX) as archive:
        shipped = json.loads(archive.read("extension/package.json"))
        names = archive.namelist()
    assert shipped == json.loads((BUILD.EXTENSION_DIR / "package.json").read_text())
    assert "extension/out/extension.js" in names


def test_the_shipped_vsix_stays_small() -> None:
    """No TypeScript sources, typings or maps (.vscodeignore), under 1 MB."""
    with zipfile.ZipFile(BUILD.VSIX) as archive:
        names = archive.namelist()
    assert not [name for name in names if name.endswith((".ts", ".map"))]
    assert BUILD.VSIX.stat().st_size < BUILD.MAX_VSIX_BYTES


def test_the_source_hash_changes_with_any_source_file(tmp_path: Path) -> None:
    """The check above can fail: an edited, added or renamed source file, a changed
    dependency lock or .vscodeignore change the hash; the build outputs do not."""
    copy = tmp_path / "vscode"
    shutil.copytree(
        BUILD.EXTENSION_DIR, copy, ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix")
    )
    original = BUILD.source_hash(copy)
    assert original == BUILD.source_hash()

    def changed(edit: Path, text: str) -> bool:
        before = edit.read_bytes() if edit.exists() else None
        edit.write_text(text)
        differs = BUILD.source_hash(copy) != original
        if before is None:
            edit.unlink()
        else:
            edit.write_bytes(before)
        return differs

    extension_ts = copy / "src" / "extension.ts"
    assert changed(extension_ts, extension_ts.read_text() + "\n// one more line\n")
    assert changed(copy / "src" / "added.ts", "export const x = 1;\n")
    assert changed(copy / "package-lock.json", "{}")
    assert changed(copy / ".vscodeignore", "src/**\n")
    (copy / "out").mkdir()
    assert not changed(copy / "out" / "extension.js", "built output")
    assert not changed(copy / "other.vsix", "a package")
    crlf = extension_ts.read_bytes().replace(b"\n", b"\r\n")
    extension_ts.write_bytes(crlf)
    assert BUILD.source_hash(copy) == original  # a Windows checkout's line endings
