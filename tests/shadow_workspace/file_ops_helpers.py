"""Helpers of the file operation tests: a small Python project, the change set an agent
makes to it (a module created, one renamed with its text changed, one deleted, the
imports edited, an executable moved), and the files of a tree with their modes."""

from __future__ import annotations

from pathlib import Path

from shadow_helpers import uri_of
from shadowtab.shadow_workspace.agent_edits import AgentWrite
from shadowtab.shadow_workspace.agent_file_ops import AgentDelete, AgentRename

FILES = {
    "pkg/__init__.py": "",
    "pkg/old.py": "def helper():\n    return 1\n",
    "pkg/gone.py": "GONE = True\n",
    "main.py": "from pkg.old import helper\nfrom pkg.gone import GONE\n\nprint(helper(), GONE)\n",
    "tool.sh": "#!/bin/sh\necho hi\n",
}


def make_tree(folder: Path) -> None:
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (folder / "tool.sh").chmod(0o755)


def texts(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file below `folder` (no .git): its text and mode."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(folder).parts:
            found[str(path.relative_to(folder))] = (path.read_text(), path.stat().st_mode & 0o777)
    return found


def agent_changes(root: Path) -> list[AgentWrite | AgentDelete | AgentRename]:
    """A module created, one renamed (its text changed), one deleted, the imports edited."""
    return [
        AgentWrite(uri_of(root / "pkg/new.py"), "from pkg.util import helper\n\nX = helper()\n"),
        AgentRename(
            uri_of(root / "pkg/old.py"),
            uri_of(root / "pkg/util.py"),
            "def helper():\n    return 2\n",
        ),
        AgentDelete(uri_of(root / "pkg/gone.py")),
        AgentWrite(uri_of(root / "main.py"), "from pkg.util import helper\n\nprint(helper())\n"),
        AgentRename(uri_of(root / "tool.sh"), uri_of(root / "bin/tool.sh")),
    ]
