"""jedi in the daemon's process (lsp/jedi_environment.py): the name check reads the
standard library's compiled modules but imports no compiled module from site-packages
(msgpack's, a dependency of the daemon, stands for torch's), in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from shadowtab.inference.next_edit.candidates import Candidate
    from shadowtab.inference.next_edit.edits import TextEdit
    from shadowtab.lsp.name_check import NameCheck

    root = Path(sys.argv[1])
    doc = "import math\\nimport msgpack._cmsgpack as packer\\n\\n\\ndef run(x):\\n    return "

    async def shown(check, suggestion):
        edit = TextEdit(len(doc), len(doc), suggestion)
        candidate = Candidate((edit,), 0.5, "model", kind="inline")
        checked = await check.checked(doc, str(root / "main.py"), str(root), candidate)
        return checked.edit.new_text if checked else None

    async def main():
        check = NameCheck(deadline_s=60)
        try:
            loaded = "msgpack._cmsgpack" in sys.modules
            results = [await shown(check, s) for s in ("math.sqrtx(x)", "packer.Packerz(x)")]
            print(json.dumps([loaded, "msgpack._cmsgpack" in sys.modules, *results]))
        finally:
            check.close()

    asyncio.run(main())
    """
)


def test_the_name_check_imports_no_compiled_module_from_site_packages(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded_before, loaded_after, math_shown, packer_shown = json.loads(
        done.stdout.strip().splitlines()[-1]
    )
    assert not loaded_before and not loaded_after, done.stderr[-2000:]
    assert math_shown == "math."  # a compiled module of the standard library is read
    assert packer_shown == "packer.Packerz(x)"  # unknown there: not wrong
