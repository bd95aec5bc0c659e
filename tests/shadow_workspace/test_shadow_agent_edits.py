"""Agent writes into the shadow workspace: only while the model holds the lock (taken
only from a user with nothing unsaved), all files or none, never on disk until the user
commits, refused for paths outside the root, binary or oversized text, a stale base."""

from __future__ import annotations

from pathlib import Path

import pytest
from shadow_helpers import disk_snapshot, uri_of
from shadowtab.shadow_workspace import (
    DocumentTooLarge,
    PathOutsideRoot,
    Range,
    ShadowError,
    ShadowWorkspace,
    TextChange,
    UnsupportedFile,
)
from shadowtab.shadow_workspace.agent_edits import (
    MAX_AGENT_WRITE_BYTES,
    AgentWrite,
    LockRefused,
    read_shadow_text,
    target_uri,
    write_texts,
)
from shadowtab.shadow_workspace.agent_patch import apply_patch
from shadowtab.shadow_workspace.patching import PatchError


@pytest.fixture
def files(root: Path) -> dict[str, Path]:
    found = {name: root / name for name in ("app.py", "util.py")}
    found["app.py"].write_text("import os\n\nx = 1\n")
    found["util.py"].write_text("def f():\n    return 1\n")
    return found


def write(path: Path, text: str, expected: str | None = None) -> AgentWrite:
    return AgentWrite(uri_of(path), text, expected)


def test_user_holds_the_lock_the_write_is_refused_and_names_the_command(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path
) -> None:
    before = disk_snapshot(root)
    with pytest.raises(LockRefused, match="shadowtab lock release"):
        write_texts(workspace, [write(files["app.py"], "x = 2\n")])
    assert workspace.lock.holder == "user" and not workspace.has_pending()
    assert disk_snapshot(root) == before


def test_take_gives_the_lock_to_the_model_and_the_disk_stays(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path
) -> None:
    before = disk_snapshot(root)
    written = write_texts(workspace, [write(files["app.py"], "import os\n\nx = 2\n")], take=True)
    assert workspace.lock.holder == "model"
    assert [w.after for w in written] == ["import os\n\nx = 2\n"]
    assert written[0].before == "import os\n\nx = 1\n" and written[0].result.pending
    assert disk_snapshot(root) == before
    assert read_shadow_text(workspace, uri_of(files["app.py"])).text == "import os\n\nx = 2\n"
    result = workspace.take("commit")
    assert result.ok and files["app.py"].read_text() == "import os\n\nx = 2\n"


def test_no_take_from_a_user_with_unsaved_edits(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path
) -> None:
    uri = uri_of(files["util.py"])
    workspace.open_document(uri, files["util.py"].read_text(), 1, "python", editor=1)
    workspace.edit_document(uri, 1, 2, [TextChange(Range.of(0, 0, 0, 0), "# typing\n")])
    with pytest.raises(LockRefused, match=r"unsaved edits in 1 file\(s\) \(util.py\)"):
        write_texts(workspace, [write(files["app.py"], "x = 2\n")], take=True)
    assert workspace.lock.holder == "user"
    assert workspace.pending_uris() == [uri]  # only the user's typing


def test_all_or_nothing_when_one_target_is_refused(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path, tmp_path: Path
) -> None:
    workspace.release()
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    (root / "data.bin").write_bytes(b"\x00\x01binary")
    before = disk_snapshot(tmp_path)
    for bad in (
        write(outside, "secret = 2\n"),
        write(root / "data.bin", "text now\n"),
        write(root / "nul.py", "a\x00b\n"),
    ):
        with pytest.raises((PathOutsideRoot, UnsupportedFile)):
            write_texts(workspace, [write(files["app.py"], "x = 2\n"), bad])
        assert not workspace.has_pending()
    assert disk_snapshot(tmp_path) == before


def test_a_write_through_a_symlink_is_refused(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path, tmp_path: Path
) -> None:
    workspace.release()
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PathOutsideRoot):
        write_texts(workspace, [write(root / "link" / "x.py", "x = 1\n")])
    assert not (tmp_path / "elsewhere" / "x.py").exists()


def test_relative_paths_and_dotdot(workspace: ShadowWorkspace, root: Path) -> None:
    assert target_uri(workspace, "pkg/mod.py") == uri_of(root / "pkg" / "mod.py")
    with pytest.raises(PathOutsideRoot):
        target_uri(workspace, "../escape.py")
    with pytest.raises(ShadowError, match="path is required"):
        target_uri(workspace, "")


def test_a_10_mb_write_is_refused(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path
) -> None:
    workspace.release()
    big = "x = 1\n" * (10 * 1024 * 1024 // 6 + 1)
    assert len(big) > MAX_AGENT_WRITE_BYTES
    with pytest.raises(DocumentTooLarge, match="nothing written"):
        write_texts(workspace, [write(files["app.py"], big)])
    assert not workspace.has_pending()


def test_expected_sha256_refuses_a_stale_base(
    workspace: ShadowWorkspace, files: dict[str, Path]
) -> None:
    workspace.release()
    uri = uri_of(files["app.py"])
    read = read_shadow_text(workspace, uri)
    write_texts(workspace, [write(files["app.py"], "x = 2\n", read.sha256)])
    with pytest.raises(ShadowError, match="changed since it was read"):
        write_texts(workspace, [write(files["app.py"], "x = 3\n", read.sha256)])
    assert read_shadow_text(workspace, uri).text == "x = 2\n"


def test_new_file_in_a_new_folder_is_created_only_on_commit(
    workspace: ShadowWorkspace, root: Path
) -> None:
    target = root / "pkg" / "new.py"
    write_texts(workspace, [write(target, "y = 1\n")], take=True)
    assert not target.exists() and workspace.pending_uris() == [uri_of(target)]
    assert workspace.take("commit").ok and target.read_text() == "y = 1\n"


def test_crlf_file_keeps_its_line_endings(workspace: ShadowWorkspace, root: Path) -> None:
    target = root / "win.py"
    target.write_bytes(b"a = 1\r\nb = 2\r\n")
    (written,) = write_texts(workspace, [write(target, "a = 1\nb = 3\n")], take=True)
    assert written.after == "a = 1\r\nb = 3\r\n"
    assert workspace.take("commit").ok and target.read_bytes() == b"a = 1\r\nb = 3\r\n"


def test_patch_that_does_not_apply_changes_nothing(
    workspace: ShadowWorkspace, files: dict[str, Path], root: Path
) -> None:
    workspace.release()
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -3 +3 @@\n-x = 1\n+x = 2\n"
        "--- a/util.py\n+++ b/util.py\n@@ -2 +2 @@\n-    return 99\n+    return 2\n"
    )
    with pytest.raises(PatchError, match=r"util\.py"):
        apply_patch(workspace, patch)
    assert not workspace.has_pending()
    good = patch.replace("return 99", "return 1")
    written = apply_patch(workspace, good)
    assert [w.after for w in written] == ["import os\n\nx = 2\n", "def f():\n    return 2\n"]
    assert files["app.py"].read_text() == "import os\n\nx = 1\n"


def test_patch_applies_on_top_of_pending_edits(
    workspace: ShadowWorkspace, files: dict[str, Path]
) -> None:
    write_texts(workspace, [write(files["app.py"], "import os\n\nx = 2\n")], take=True)
    apply_patch(workspace, "--- a/app.py\n+++ b/app.py\n@@ -3 +3 @@\n-x = 2\n+x = 3\n")
    assert read_shadow_text(workspace, uri_of(files["app.py"])).text == "import os\n\nx = 3\n"


def test_patch_creating_an_existing_file_is_refused(
    workspace: ShadowWorkspace, files: dict[str, Path]
) -> None:
    workspace.release()
    with pytest.raises(PatchError, match="exists"):
        apply_patch(workspace, "--- /dev/null\n+++ b/app.py\n@@ -0,0 +1 @@\n+x\n")
    with pytest.raises(PatchError, match="no such file"):
        apply_patch(workspace, "--- a/gone.py\n+++ b/gone.py\n@@ -1 +1 @@\n-a\n+b\n")


def test_disk_changed_underneath_is_a_conflict_at_commit(
    workspace: ShadowWorkspace, files: dict[str, Path]
) -> None:
    write_texts(workspace, [write(files["app.py"], "x = 2\n")], take=True)
    files["app.py"].write_text("x = 'from the outside'\n")
    result = workspace.take("commit")
    assert not result.ok and "changed on disk" in result.conflicts[0]["error"]
    assert files["app.py"].read_text() == "x = 'from the outside'\n"


def test_an_open_document_gets_the_write_as_a_model_edit(
    workspace: ShadowWorkspace, files: dict[str, Path]
) -> None:
    uri = uri_of(files["app.py"])
    workspace.open_document(uri, files["app.py"].read_text(), 1, "python", editor=1)
    (written,) = write_texts(workspace, [write(files["app.py"], "import os\n\nx = 5\n")], True)
    assert written.shown and written.language_id == "python"
    doc = workspace.document(uri)
    assert doc is not None and doc.model_edits == 1 and len(doc.model_spans) == 1
    workspace.take("discard")  # a discard drops the agent's edit, as any model edit
    assert doc.text == "import os\n\nx = 1\n"
