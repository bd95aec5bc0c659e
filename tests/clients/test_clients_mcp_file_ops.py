"""The `mcp` package's stdio client drives `shadowtab mcp` through an agent's whole change:
a module created, another renamed, a third deleted, the imports edited, all held in
the shadow and linted there (imports against the shadow's files); the disk unchanged
until `shadowtab lock take --commit`, then equal to what real `git apply` makes of a
copy with the same patch (the pending diff the agent saw)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from clients_support import ShadowtabEnv
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_clients_mcp import error_text, reply_of

PROJECT = {
    "pyproject.toml": '[project]\nname = "sample"\n',
    "pkg/__init__.py": "",
    "pkg/old.py": "def helper() -> int:\n    return 1\n",
    "pkg/gone.py": "GONE = True\n",
    "main.py": "from pkg.gone import GONE\nfrom pkg.old import helper\n\nprint(helper(), GONE)\n",
}
IMPORTS_PATCH = (
    "--- a/main.py\n+++ b/main.py\n@@ -1,4 +1,4 @@\n"
    "-from pkg.gone import GONE\n-from pkg.old import helper\n"
    "+from pkg.new import TWICE\n+from pkg.util import helper\n"
    " \n"
    "-print(helper(), GONE)\n+print(helper(), TWICE)\n"
)


def make_project(folder: Path) -> None:
    for name, text in PROJECT.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def files_of(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def codes(reply: dict[str, Any]) -> list[str]:
    return [d["code"] for d in reply["diagnostics"]]


async def test_an_agent_creates_renames_deletes_and_edits_imports_through_mcp(
    shadowtab_env: ShadowtabEnv, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    make_project(root)
    before = files_of(root)
    params = StdioServerParameters(
        command=shadowtab_env.shadowtab,
        args=["mcp", "--root", str(root), "--take"],
        env=shadowtab_env.env,
        cwd=str(root),
    )
    try:
        async with (
            stdio_client(params) as (reader, writer),
            ClientSession(reader, writer) as session,
        ):
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"delete_file", "rename_file"} <= tools
            call = session.call_tool
            old = reply_of(await call("read_file", {"path": "pkg/old.py"}))
            stale = await call(
                "rename_file",
                {"path": "pkg/old.py", "new_path": "pkg/util.py", "expected_sha256": "0" * 64},
            )
            assert "changed since it was read" in error_text(stale)
            moved = reply_of(
                await call(
                    "rename_file",
                    {
                        "path": "pkg/old.py",
                        "new_path": "pkg/util.py",
                        "expected_sha256": old["sha256"],
                    },
                )
            )
            assert [f["operation"] for f in moved["files"]] == ["rename", "delete"]
            over = await call("rename_file", {"path": "pkg/gone.py", "new_path": "main.py"})
            assert "exists" in error_text(over)
            outside = await call("delete_file", {"path": "../elsewhere.py"})
            assert "outside" in error_text(outside)

            created = reply_of(
                await call(
                    "write_file",
                    {
                        "path": "pkg/new.py",
                        "content": "from pkg.util import helper\n\nTWICE = 2 * helper()\n",
                    },
                )
            )
            assert created["files"][0]["diagnostics"] == 0  # pkg.util: in the shadow only
            deleted = reply_of(await call("delete_file", {"path": "pkg/gone.py"}))
            assert deleted["files"][0]["operation"] == "delete"
            stale_imports = reply_of(await call("diagnostics", {"path": "main.py"}))
            assert codes(stale_imports) == ["unresolved-import", "unresolved-import"]

            patched = reply_of(await call("apply_patch", {"patch": IMPORTS_PATCH}))
            assert sorted(d["code"] for d in patched["files"][0]["removed"]) == [
                "unresolved-import",
                "unresolved-import",
            ]
            assert codes(reply_of(await call("diagnostics", {"path": "main.py"}))) == []
            gone = await call("read_file", {"path": "pkg/gone.py"})
            assert "no such file" in error_text(gone)

            pending = reply_of(await call("list_pending", {}))
            diff = pending["diff"]
            assert "rename from pkg/old.py\nrename to pkg/util.py\n" in diff
            assert "diff --git a/pkg/gone.py b/pkg/gone.py\ndeleted file mode 100644\n" in diff
            assert files_of(root) == before  # nothing on disk yet

            committed = shadowtab_env.run("lock", "take", "--commit", "--root", str(root))
            assert committed.returncode == 0, committed.stderr
            status = reply_of(await call("lock_status", {}))
            assert status["holder"] == "user" and not status["pending"]
    finally:
        shadowtab_env.run("daemon", "stop")

    copy = tmp_path / "copy"
    make_project(copy)
    subprocess.run(["git", "init", "-q", str(copy)], check=True)
    applied = subprocess.run(
        ["git", "-C", str(copy), "apply", "-"], input=diff, text=True, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr + diff
    assert files_of(root) == files_of(copy)
    assert not (root / "pkg/old.py").exists() and not (root / "pkg/gone.py").exists()
