"""jedi's environment in the name check's process (lsp/jedi_environment.py): it reads
the standard library's compiled modules but imports no compiled module from
site-packages (msgpack's, a dependency of the daemon, stands for torch's), in a fresh
interpreter as the jedi process is."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, math, sys
    from shadowtab.lsp.jedi_names import JediNames

    root = sys.argv[1]
    doc = "import math\\nimport msgpack._cmsgpack as packer\\n\\n\\ndef run(x):\\n    return "

    names = JediNames()

    def shown(suggestion):
        edit = (len(doc), len(doc), suggestion)
        return suggestion[: names.kept(doc, root + "/main.py", root, edit, math.inf)]

    loaded = "msgpack._cmsgpack" in sys.modules
    results = [shown(s) for s in ("math.sqrtx(x)", "packer.Packerz(x)")]
    print(json.dumps([loaded, "msgpack._cmsgpack" in sys.modules, *results]))
    """
)


def test_the_jedi_process_imports_no_compiled_module_from_site_packages(tmp_path: Path) -> None:
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
