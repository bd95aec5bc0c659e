"""The name check's jedi in a process of its own (lsp/jedi_process.py, lsp/jedi_names.py):
the daemon never imports jedi; a call past its budget has the process killed and its
document skipped for a while; a process that dies is replaced. Real processes, real jedi."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from shadowtab.lsp import name_check
from shadowtab.lsp.jedi_names import JediNames, answer
from shadowtab.lsp.name_check import NameCheck
from test_lsp_name_check import CURSOR, MAIN, project, shown  # noqa: F401 (the fixture)

IN_A_FRESH_DAEMON = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from shadowtab.inference.next_edit.candidates import Candidate
    from shadowtab.inference.next_edit.edits import TextEdit
    from shadowtab.lsp.name_check import NameCheck

    root = Path(sys.argv[1])
    doc = "import os\\n\\n\\ndef run(x):\\n    return "

    async def main():
        check = NameCheck(deadline_s=60)
        try:
            edit = TextEdit(len(doc), len(doc), "os.getcwdz()")
            candidate = Candidate((edit,), 0.5, "model", kind="inline")
            checked = await check.checked(doc, str(root / "main.py"), str(root), candidate)
            imported = ["jedi" in sys.modules, "parso" in sys.modules]
            print(json.dumps([checked.edit.new_text, *imported]))
        finally:
            check.close()

    asyncio.run(main())
    """
)


def test_the_daemon_checks_names_without_importing_jedi(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", IN_A_FRESH_DAEMON, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    shown_text, jedi_imported, parso_imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown_text == "os."  # checked: the made-up member is cut
    assert not jedi_imported and not parso_imported, done.stderr[-2000:]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_call_past_its_budget_kills_the_process_and_skips_the_document(
    project: Path,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = NameCheck(deadline_s=60)
    try:
        assert await shown(check, project, "return self.cuont") == "return self."
        first = check._process.pid()
        assert first is not None and alive(first)

        monkeypatch.setattr(name_check, "CALL_BUDGET_S", 0.000_1)  # no jedi call fits
        assert await shown(check, project, "return self.cuunt") == "return self.cuunt"
        assert not alive(first)  # killed and reaped
        assert check.counts()["stopped"] == 1
        # the document is skipped for a while: shown unchecked, no process started
        assert await shown(check, project, "return self.cuint") == "return self.cuint"
        assert check.counts()["skipped_slow"] == 1
        assert check._process.pid() is None

        monkeypatch.undo()
        other = MAIN.replace(CURSOR, "")  # another document of the project: checked
        (project / "other.py").write_text(other)
        assert await shown(check, project, "return self.cuont", name="other.py") == ("return self.")
        counts = check.counts()
        assert counts["processes_started"] == 2 and counts["checked"] == 2, counts
    finally:
        check.close()


async def test_a_jedi_process_that_dies_is_replaced(
    project: Path,  # noqa: F811 (the fixture)
) -> None:
    check = NameCheck(deadline_s=60)
    try:
        assert await shown(check, project, "return self.cuont") == "return self."
        pid = check._process.pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        # the request that finds it dead passes unchecked, with an error counted
        assert await shown(check, project, "return self.cuunt") == "return self.cuunt"
        assert check.counts()["error"] == 1
        assert await shown(check, project, "return self.cuint") == "return self."
        assert check.counts()["processes_started"] == 2
    finally:
        check.close()
    assert check._process.pid() is None


def test_the_process_answers_a_passed_deadline_and_a_bad_request_and_goes_on(
    project: Path,  # noqa: F811 (the fixture)
) -> None:
    names = JediNames()
    text = MAIN.replace(CURSOR, "")
    at = MAIN.index(CURSOR)
    request = {
        "op": "kept",
        **{"text": text, "path": str(project / "main.py"), "root": str(project)},
        **{"start": at, "end": at, "new_text": "return self.cuont"},
    }
    late = answer(names, {**request, "deadline_s": 0.0})
    assert (late["op"], late["keep"]) == ("kept", None)
    bad = answer(names, {"op": "rename"})
    assert bad["op"] == "error" and "rename" in bad["message"]
    kept = answer(names, {**request, "deadline_s": 60.0})
    assert kept["keep"] == len("return self.")
    assert kept["counts"]["jedi_calls"] >= 1 and kept["rss_mb"] > 0
