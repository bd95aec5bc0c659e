"""`shadowtab shadow write|apply|mv|rm|read|lint` against a real daemon (engine off, the
default linters: ruff and the Python compiler): edits land in the shadow and not on
disk, each write prints the diagnostics it added and removed, refusals are clear and
change nothing, the user's commit writes the disk."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from shadow_helpers import cli, disk_snapshot

SOURCE = "import os\n\nx = 1\n"


def as_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_write_read_lint_and_commit(daemon_dirs: Path) -> None:
    project = daemon_dirs
    app = project / "app.py"
    app.write_text(SOURCE)

    read = cli(project, "shadow", "read", "app.py")  # starts the daemon
    assert read.returncode == 0, read.stderr
    assert read.stdout == SOURCE
    sha = as_json(cli(project, "shadow", "read", "app.py", "--json"))["sha256"]

    refused = cli(project, "shadow", "write", "app.py", stdin="x = 2\n")
    assert refused.returncode == 1
    assert "user holds the save lock" in refused.stderr
    assert "shadowtab lock release" in refused.stderr
    disk = disk_snapshot(project)

    new_text = "import os\nimport sys\n\nx = 2\n"
    reply = as_json(
        cli(
            project,
            "shadow",
            "write",
            "app.py",
            "--take",
            "--if-match",
            str(sha),
            "--json",
            stdin=new_text,
        )
    )
    assert reply["holder"] == "model" and reply["pending"] == [app.as_uri()]
    (written,) = reply["files"]
    assert written["path"] == "app.py" and written["changed"] and written["pending"]
    assert [(d["code"], "sys" in d["message"]) for d in written["added"]] == [("F401", True)]
    assert written["removed"] == []
    assert disk_snapshot(project) == disk  # the shadow only

    assert cli(project, "shadow", "read", "app.py").stdout == new_text
    lint = cli(project, "shadow", "lint", "app.py", "--json")
    assert lint.returncode == 1  # there are diagnostics
    codes = sorted(d["code"] for d in json.loads(lint.stdout)["diagnostics"])
    assert codes == ["F401", "F401"]
    human_lint = cli(project, "shadow", "lint", "app.py")
    assert "app.py:2:8: warning: `sys` imported but unused [F401] (ruff)" in human_lint.stdout

    human = cli(project, "shadow", "write", "app.py", stdin="x = 3\n")
    assert human.returncode == 0, human.stderr
    assert "wrote: app.py (pending in the shadow)" in human.stdout
    assert human.stdout.count("  - app.py:") == 2 and "  + " not in human.stdout
    assert "the disk is unchanged" in human.stdout
    clean = cli(project, "shadow", "lint", "app.py")
    assert clean.returncode == 0 and clean.stdout == ""

    stale = cli(project, "shadow", "write", "app.py", "--if-match", str(sha), stdin="x = 4\n")
    assert stale.returncode == 1 and "changed since it was read" in stale.stderr
    assert disk_snapshot(project) == disk

    taken = cli(project, "lock", "take", "--commit")
    assert taken.returncode == 0, taken.stderr
    assert app.read_text() == "x = 3\n"


def test_apply_patches_all_or_nothing(daemon_dirs: Path) -> None:
    project = daemon_dirs
    (project / "app.py").write_text(SOURCE)
    (project / "util.py").write_text("def f():\n    return 1\n")
    assert cli(project, "lock", "release").returncode == 2  # no daemon yet: not started
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n import os\n \n-x = 1\n+x = os.sep\n"
        "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 7\n+    return 2\n"
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+import json\n"
    )
    bad = project / "bad.patch"
    bad.write_text(patch)
    disk = disk_snapshot(project)
    failed = cli(project, "shadow", "apply", str(bad), "--take")
    assert failed.returncode == 1
    assert "hunk 1 of util.py" in failed.stderr and "'    return 1'" in failed.stderr
    assert disk_snapshot(project) == disk
    assert cli(project, "shadow", "pending").stdout == ""  # nothing changed in the shadow
    assert "user holds" in cli(project, "lock", "status").stdout  # nor the lock

    good = patch.replace("return 7", "return 1")
    reply = as_json(cli(project, "shadow", "apply", "-", "--take", "--json", stdin=good))
    by_path = {f["path"]: f for f in reply["files"]}
    assert sorted(by_path) == ["app.py", "pkg/new.py", "util.py"]
    assert [d["code"] for d in by_path["app.py"]["removed"]] == ["F401"]  # os is used now
    assert [d["code"] for d in by_path["pkg/new.py"]["added"]] == ["F401"]
    assert disk_snapshot(project) == disk
    diff = cli(project, "shadow", "diff").stdout
    assert "+x = os.sep" in diff and "+    return 2" in diff and "+import json" in diff

    malformed = cli(
        project, "shadow", "apply", "-", stdin="--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n x\n"
    )
    assert malformed.returncode == 1 and "malformed patch" in malformed.stderr
    not_a_patch = cli(project, "shadow", "apply", "-", stdin="hello\n")
    assert not_a_patch.returncode == 1 and "no file changes" in not_a_patch.stderr

    assert cli(project, "lock", "take", "--commit").returncode == 0
    assert (project / "pkg" / "new.py").read_text() == "import json\n"
    assert (project / "util.py").read_text() == "def f():\n    return 2\n"


def test_refusals_change_nothing(daemon_dirs: Path, tmp_path: Path) -> None:
    project = daemon_dirs
    app = project / "app.py"
    app.write_text(SOURCE)
    outside = project.parent / "outside.py"
    outside.write_text("secret = 1\n")
    blob = project / "blob.bin"
    blob.write_bytes(b"\x00\x01\x02")
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * (10 * 1024 * 1024 // 6 + 1))
    assert cli(project, "shadow", "write", "app.py", "--take", stdin="x = 2\n").returncode == 0
    disk = disk_snapshot(project)

    out = cli(project, "shadow", "write", "../outside.py", stdin="secret = 2\n")
    assert out.returncode == 1 and "outside the workspace root" in out.stderr
    binary_in = cli(project, "shadow", "write", "app.py", "--from", str(blob))
    assert binary_in.returncode == 2 and "binary input" in binary_in.stderr
    binary_file = cli(project, "shadow", "write", "blob.bin", stdin="text\n")
    assert binary_file.returncode == 1 and "binary file" in binary_file.stderr
    read_binary = cli(project, "shadow", "read", "blob.bin")
    assert read_binary.returncode == 1 and "binary file" in read_binary.stderr
    too_big = cli(project, "shadow", "write", "app.py", "--from", str(big), "--json")
    assert too_big.returncode == 2 and "limit" in too_big.stderr
    assert disk_snapshot(project) == disk and outside.read_text() == "secret = 1\n"
    assert cli(project, "shadow", "read", "app.py").stdout == "x = 2\n"

    # The user takes the lock and keeps the agent's edit pending: an agent cannot take it.
    kept = cli(project, "lock", "take", "--keep")
    assert kept.returncode == 0 and "user holds" in kept.stdout
    refused = cli(project, "shadow", "write", "app.py", "--take", stdin="x = 3\n")
    assert refused.returncode == 1
    assert "with unsaved edits in 1 file(s) (app.py)" in refused.stderr
    assert "an agent cannot take it" in refused.stderr
    assert "user holds" in cli(project, "lock", "status").stdout
    assert cli(project, "shadow", "read", "app.py").stdout == "x = 2\n"

    # A file changed on disk under the pending edit: the commit is a conflict.
    app.write_text("x = 'outside'\n")
    commit = cli(project, "lock", "take", "--commit")
    assert commit.returncode == 1 and "conflict" in commit.stderr
    assert app.read_text() == "x = 'outside'\n"


def test_read_and_lint_of_a_missing_file(daemon_dirs: Path) -> None:
    project = daemon_dirs
    for action in ("read", "lint"):
        missing = cli(project, "shadow", action, "nothing.py")
        assert missing.returncode == 1 and "no such file" in missing.stderr


def test_mv_and_rm_are_held_in_the_shadow_until_the_commit(daemon_dirs: Path) -> None:
    """`shadow mv` (with --from and --if-match) and `shadow rm`: printed, shown by `shadow
    diff` as git diff shows them, refused over an existing file or outside the root."""
    project = daemon_dirs
    (project / "pkg").mkdir()
    (project / "pkg" / "old.py").write_text("def helper():\n    return 1\n")
    (project / "pkg" / "gone.py").write_text("GONE = 1\n")
    (project / "new_text.py").write_text("def helper():\n    return 2\n")
    sha = as_json(cli(project, "shadow", "read", "pkg/old.py", "--json"))["sha256"]
    disk = disk_snapshot(project)

    stale = cli(project, "shadow", "mv", "pkg/old.py", "pkg/util.py", "--take", "--if-match", "0")
    assert stale.returncode == 1 and "changed since it was read" in stale.stderr
    over = cli(project, "shadow", "mv", "pkg/old.py", "pkg/gone.py", "--take")
    assert over.returncode == 1 and "exists" in over.stderr
    outside = cli(project, "shadow", "rm", "../elsewhere.py", "--take")
    assert outside.returncode == 1 and "outside" in outside.stderr
    moved = cli(
        project,
        "shadow",
        "mv",
        "pkg/old.py",
        "pkg/util.py",
        "--from",
        "new_text.py",
        "--if-match",
        str(sha),
        "--take",
    )
    assert moved.returncode == 0, moved.stderr
    assert "renamed: pkg/old.py -> pkg/util.py (pending in the shadow)" in moved.stdout
    removed = cli(project, "shadow", "rm", "pkg/gone.py")
    assert removed.returncode == 0 and "deleted: pkg/gone.py" in removed.stdout
    diff = cli(project, "shadow", "diff")
    assert "rename from pkg/old.py\nrename to pkg/util.py\n" in diff.stdout
    assert "-    return 1\n+    return 2\n" in diff.stdout
    assert "deleted file mode 100644\n" in diff.stdout
    assert disk_snapshot(project) == disk  # the shadow only

    kept = cli(project, "shadow", "discard", "pkg/gone.py")  # the user keeps that file
    assert kept.returncode == 0 and "discarded:" in kept.stdout, kept.stderr
    (project / "pkg" / "gone2.py").write_text("GONE = 2\n")
    assert cli(project, "shadow", "rm", "pkg/gone.py").returncode == 0
    assert cli(project, "shadow", "rm", "pkg/gone2.py").returncode == 0
    some = cli(project, "shadow", "commit", "pkg/gone2.py")
    assert some.returncode == 0 and not (project / "pkg" / "gone2.py").exists(), some.stderr
    assert (project / "pkg" / "gone.py").exists() and (project / "pkg" / "old.py").exists()

    committed = cli(project, "lock", "take", "--commit")
    assert committed.returncode == 0, committed.stderr
    assert f"removed:   {(project / 'pkg' / 'gone.py').as_uri()}" in committed.stdout
    assert not (project / "pkg" / "old.py").exists() and not (project / "pkg" / "gone.py").exists()
    assert (project / "pkg" / "util.py").read_text() == "def helper():\n    return 2\n"
