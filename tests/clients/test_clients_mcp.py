"""The `mcp` package's own stdio client drives `shadowtab mcp` (which starts the daemon):
an agent writes an edit and reads its diagnostics while the disk stays unchanged, a bad
patch and a path outside the root are refused, the user commits through the CLI and
only then the disk changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clients_support import SAMPLE_SOURCE, ShadowtabEnv
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "read_file",
    "write_file",
    "apply_patch",
    "diagnostics",
    "lock_status",
    "list_pending",
    "request_commit",
}


def reply_of(result: Any) -> dict[str, Any]:
    """A tool's structured reply (the text content holds the same JSON)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(getattr(item, "text", "") for item in result.content)


@pytest.fixture
def stop_daemon_after(shadowtab_env: ShadowtabEnv) -> Any:
    yield
    stopped = shadowtab_env.run("daemon", "stop")
    assert stopped.returncode in (0, 2), stopped.stderr  # 2: never started


async def test_mcp_agent_edits_through_the_shadow(
    shadowtab_env: ShadowtabEnv, workspace: Path, stop_daemon_after: None
) -> None:
    sample = workspace / "sample.py"
    params = StdioServerParameters(
        command=shadowtab_env.shadowtab,
        args=["mcp", "--root", str(workspace)],
        env=shadowtab_env.env,
        cwd=str(workspace),
    )
    async with stdio_client(params) as (reader, writer), ClientSession(reader, writer) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools >= TOOLS
        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == [workspace.as_uri()]
        state = await session.read_resource(workspace.as_uri())
        assert json.loads(getattr(state.contents[0], "text", ""))["holder"] == "user"

        refused = await session.call_tool("write_file", {"path": "sample.py", "content": "x = 1\n"})
        assert "user holds the save lock" in error_text(refused)

        nothing = await session.call_tool("request_commit", {})
        assert "nothing is pending" in error_text(nothing)

        read = reply_of(await session.call_tool("read_file", {"path": "sample.py"}))
        assert read["text"] == SAMPLE_SOURCE and not read["pending"]
        new_text = SAMPLE_SOURCE.replace("import os\n", "import os\nimport sys\n")
        written = reply_of(
            await session.call_tool(
                "write_file",
                {
                    "path": "sample.py",
                    "content": new_text,
                    "take_lock": True,
                    "expected_sha256": read["sha256"],
                },
            )
        )
        assert written["holder"] == "model"
        (item,) = written["files"]
        assert [d["code"] for d in item["added"]] == ["F401"] and "sys" in item["added"][0][
            "message"
        ]
        assert sample.read_text() == SAMPLE_SOURCE  # the disk is unchanged

        lint = reply_of(await session.call_tool("diagnostics", {"path": str(sample)}))
        assert sorted(d["code"] for d in lint["diagnostics"]) == ["F401", "F401"]
        assert (
            reply_of(await session.call_tool("read_file", {"path": "sample.py"}))["text"]
            == new_text
        )

        bad_patch = (
            "--- a/sample.py\n+++ b/sample.py\n"
            "@@ -1,2 +1,2 @@\n import nothing\n-import sys\n+import re\n"
        )
        failed = await session.call_tool("apply_patch", {"patch": bad_patch})
        assert "does not apply" in error_text(failed)
        outside = await session.call_tool(
            "write_file", {"path": str(workspace.parent / "elsewhere.py"), "content": "x\n"}
        )
        assert "outside the workspace roots" in error_text(outside)
        escape = await session.call_tool(
            "write_file", {"path": "../elsewhere.py", "content": "x\n"}
        )
        assert "outside" in error_text(escape)
        assert not (workspace.parent / "elsewhere.py").exists()
        huge = "x = 1\n" * (10 * 1024 * 1024 // 6 + 1)  # 10 MB: over the agent write limit
        too_big = await session.call_tool("write_file", {"path": "big.py", "content": huge})
        assert "over the" in error_text(too_big) and "nothing written" in error_text(too_big)
        assert not (workspace / "big.py").exists()

        patched = reply_of(
            await session.call_tool(
                "apply_patch",
                {"patch": bad_patch.replace("import nothing", "import os")},
            )
        )
        assert [d["code"] for d in patched["files"][0]["removed"]] == ["F401"]  # sys is gone

        pending = reply_of(await session.call_tool("list_pending", {}))
        assert pending["files"] == [sample.as_uri()] and "+import re" in pending["diff"]
        status = reply_of(await session.call_tool("lock_status", {}))
        assert status["holder"] == "model" and status["pending"] == [sample.as_uri()]
        asked = reply_of(await session.call_tool("request_commit", {"message": "adds re"}))
        assert "shadowtab lock take --commit" in asked["message"]
        assert sample.read_text() == SAMPLE_SOURCE

        committed = shadowtab_env.run("lock", "take", "--commit", "--root", str(workspace))
        assert committed.returncode == 0, committed.stderr
        expected = SAMPLE_SOURCE.replace("import os\n", "import os\nimport re\n")
        assert sample.read_text() == expected
        after = reply_of(await session.call_tool("read_file", {"path": "sample.py"}))
        assert after["text"] == expected and not after["pending"]
