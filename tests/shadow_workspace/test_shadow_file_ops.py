"""Deletes and renames held in the shadow: journaled, shown as `git diff` shows them,
discarded, and committed as one step (the disk then equals `git apply` of the same
patch, run by real git in another copy); confined to the root; a target changed on disk
since it was read is a conflict and nothing is overwritten."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from file_ops_helpers import agent_changes, make_tree, texts
from shadow_helpers import disk_snapshot, uri_of
from shadowtab.shadow_workspace import PathOutsideRoot, ShadowError, ShadowWorkspace
from shadowtab.shadow_workspace.agent_edits import AgentWrite, StaleText, read_shadow_text
from shadowtab.shadow_workspace.agent_file_ops import (
    AgentDelete,
    AgentRename,
    FileOpConflict,
    apply_changes,
)
from shadowtab.shadow_workspace.agent_patch import apply_patch
from shadowtab.shadow_workspace.partial_take import pending_changes, take_some


def git(folder: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, input=stdin, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def tree(root: Path) -> Path:
    make_tree(root)
    return root


def test_file_ops_are_held_in_the_shadow_and_committed_as_git_applies_them(
    workspace: ShadowWorkspace, tree: Path, tmp_path: Path
) -> None:
    before = disk_snapshot(tree)
    written = apply_changes(workspace, agent_changes(tree), take=True)
    assert [w.operation for w in written] == [
        "write",
        "rename",
        "delete",
        "delete",
        "write",
        "rename",
        "delete",
    ]
    assert disk_snapshot(tree) == before  # nothing on disk yet
    assert not read_shadow_text(workspace, uri_of(tree / "pkg/gone.py")).exists
    assert read_shadow_text(workspace, uri_of(tree / "pkg/util.py")).text.endswith("2\n")
    diff = workspace.pending_diff()
    assert "diff --git a/pkg/gone.py b/pkg/gone.py\ndeleted file mode 100644\n" in diff
    assert "rename from pkg/old.py\nrename to pkg/util.py\n" in diff
    assert "diff --git a/tool.sh b/bin/tool.sh\nsimilarity index 100%\n" in diff
    copy = tmp_path / "copy"
    make_tree(copy)
    git(copy, "init", "-q")
    git(copy, "apply", "-", stdin=diff)  # real git takes the shadow's diff

    result = workspace.take("commit")
    assert result.ok and not workspace.has_pending(), result
    assert sorted(Path(uri).name for uri in result.removed) == ["gone.py", "old.py", "tool.sh"]
    assert len(result.written) == 4
    assert texts(tree) == texts(copy)
    assert (tree / "bin/tool.sh").stat().st_mode & 0o777 == 0o755  # a rename keeps the mode


def test_shadow_apply_takes_git_diff_output_and_the_disk_equals_git_apply(
    workspace: ShadowWorkspace, tree: Path, tmp_path: Path
) -> None:
    """The agent's patch comes from real git (with -M renames); applied to the shadow and
    committed, the disk holds what `git apply` of the same patch makes of a copy."""
    work = tmp_path / "agent"
    make_tree(work)
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "base")
    git(work, "mv", "pkg/old.py", "pkg/util.py")
    (work / "pkg/util.py").write_text("def helper():\n    return 1\n\n\nTWO = 2\n")
    git(work, "mv", "tool.sh", "tool2.sh")
    git(work, "rm", "-q", "pkg/gone.py", "pkg/__init__.py")  # an empty file too
    (work / "main.py").write_text("from pkg.util import helper\n\nprint(helper())\n")
    (work / "pkg/new.py").write_text("from pkg.util import TWO\n")
    git(work, "add", "-A")
    patch = git(work, "diff", "--cached", "-M")
    assert "rename from pkg/old.py" in patch and "deleted file mode" in patch

    before = disk_snapshot(tree)
    apply_patch(workspace, patch, take=True)
    assert disk_snapshot(tree) == before
    assert workspace.take("commit").ok
    assert texts(tree) == texts(work)


def test_discard_brings_back_deleted_and_renamed_files(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    before = disk_snapshot(tree)
    apply_changes(workspace, agent_changes(tree), take=True)
    result = workspace.take("discard")
    assert not workspace.has_pending() and workspace.pending_diff() == ""
    assert len(result.discarded) == 7
    assert read_shadow_text(workspace, uri_of(tree / "pkg/gone.py")).exists
    assert not read_shadow_text(workspace, uri_of(tree / "pkg/util.py")).exists
    assert disk_snapshot(tree) == before


def test_pending_file_ops_survive_a_restart(
    workspace: ShadowWorkspace, tree: Path, journal_dir: Path
) -> None:
    apply_changes(workspace, agent_changes(tree), take=True)
    diff = workspace.pending_diff()
    workspace.close()
    again = ShadowWorkspace(tree, journal_dir, watch=False)
    try:
        assert again.pending_diff() == diff
        assert again.take("commit").ok
        assert not (tree / "pkg/old.py").exists() and (tree / "pkg/util.py").exists()
    finally:
        again.close()


def test_a_file_changed_on_disk_since_it_was_read_is_a_conflict_and_kept(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    apply_changes(workspace, agent_changes(tree), take=True)
    (tree / "pkg/old.py").write_text("def helper():\n    return 'the user'\n")
    snapshot = disk_snapshot(tree)
    result = workspace.take("commit")
    # the rename's old file changed: its new file is held back too, the rest written
    errors = {Path(c["uri"]).name: c["error"] for c in result.conflicts}
    assert set(errors) == {"old.py", "util.py"}, errors
    assert (tree / "pkg/old.py").read_text().endswith("'the user'\n")
    assert not (tree / "pkg/util.py").exists() and not (tree / "pkg/gone.py").exists()
    assert "pkg/old.py" in snapshot and "rename from pkg/old.py" in workspace.pending_diff()


def test_a_deleted_file_changed_on_disk_is_not_removed(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    apply_changes(workspace, [AgentDelete(uri_of(tree / "pkg/gone.py"))], take=True)
    (tree / "pkg/gone.py").write_text("GONE = 'no: the user edited it'\n")
    result = workspace.take("commit")
    assert not result.ok and (tree / "pkg/gone.py").read_text().startswith("GONE = 'no")
    assert workspace.has_pending()


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("pkg/old.py", "main.py", FileOpConflict),  # exists: never replaced
        ("pkg/old.py", "pkg", ShadowError),  # a directory
        ("pkg/missing.py", "pkg/x.py", FileOpConflict),
        ("pkg/old.py", "../outside.py", PathOutsideRoot),
        ("pkg/old.py", "link/x.py", PathOutsideRoot),  # through a symlink
        ("link/outside.py", "pkg/x.py", PathOutsideRoot),
    ],
)
def test_refused_renames_change_nothing(
    workspace: ShadowWorkspace, tree: Path, tmp_path: Path, old: str, new: str, error: type
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outside.py").write_text("x = 1\n")
    os.symlink(outside, tree / "link")
    before = disk_snapshot(tree)
    with pytest.raises(error):
        apply_changes(
            workspace,
            [
                AgentDelete(uri_of(tree / "pkg/gone.py")),
                AgentRename(uri_of(tree / old), uri_of(tree / new)),
            ],
            take=True,
        )
    assert not workspace.has_pending() and workspace.lock.holder == "user"
    assert disk_snapshot(tree) == before


def test_if_match_guards_deletes_and_renames(workspace: ShadowWorkspace, tree: Path) -> None:
    uri = uri_of(tree / "pkg/gone.py")
    stale = "0" * 64
    with pytest.raises(StaleText):
        apply_changes(workspace, [AgentDelete(uri, stale)], take=True)
    new = uri_of(tree / "pkg/moved.py")
    with pytest.raises(StaleText):
        apply_changes(workspace, [AgentRename(uri, new, None, stale)], take=True)
    good = read_shadow_text(workspace, uri).sha256
    apply_changes(workspace, [AgentRename(uri, new, None, good)], take=True)
    assert "rename to pkg/moved.py" in workspace.pending_diff()


def test_writing_a_deleted_file_brings_it_back(workspace: ShadowWorkspace, tree: Path) -> None:
    uri = uri_of(tree / "pkg/gone.py")
    apply_changes(workspace, [AgentDelete(uri)], take=True)
    apply_changes(workspace, [AgentWrite(uri, "GONE = False\n")])
    assert workspace.take("commit").ok
    assert (tree / "pkg/gone.py").read_text() == "GONE = False\n"


def test_a_file_created_in_the_shadow_and_deleted_leaves_nothing(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    uri = uri_of(tree / "pkg/tmp.py")
    apply_changes(workspace, [AgentWrite(uri, "x = 1\n")], take=True)
    apply_changes(workspace, [AgentDelete(uri)])
    assert not workspace.has_pending()


def test_an_empty_file_renamed_stays_pending(workspace: ShadowWorkspace, tree: Path) -> None:
    old, new = tree / "pkg/__init__.py", tree / "pkg/init2.py"
    apply_changes(workspace, [AgentRename(uri_of(old), uri_of(new))], take=True)
    assert workspace.pending_diff().count("rename from pkg/__init__.py") == 1
    assert workspace.take("commit").ok
    assert new.read_text() == "" and not old.exists()


def test_a_file_with_the_users_unsaved_typing_is_not_deleted(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    path = tree / "pkg/gone.py"
    workspace.open_document(uri_of(path), "GONE = 'typed, not saved'\n", 1, "python", editor=1)
    workspace.release()
    with pytest.raises(FileOpConflict, match="unsaved edits"):
        apply_changes(workspace, [AgentRename(uri_of(path), uri_of(tree / "pkg/moved.py"))])
    with pytest.raises(FileOpConflict, match="unsaved edits"):
        apply_changes(workspace, [AgentDelete(uri_of(path))])
    assert workspace.pending_uris() == [uri_of(path)]


def test_some_files_committed_a_rename_whole_the_rest_pending(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    apply_changes(workspace, agent_changes(tree), take=True)
    # naming the rename's new file takes its old one along
    result = take_some(workspace, "commit", [uri_of(tree / "pkg/util.py")])
    assert result.ok and result.removed == [uri_of(tree / "pkg/old.py")]
    assert result.written == [uri_of(tree / "pkg/util.py")]
    assert not (tree / "pkg/old.py").exists() and (tree / "pkg/util.py").exists()
    assert (tree / "pkg/gone.py").exists() and not (tree / "pkg/new.py").exists()
    assert workspace.lock.holder == "model" and len(result.pending) == 5

    discarded = take_some(workspace, "discard", [uri_of(tree / "pkg/gone.py")])
    assert discarded.discarded == [uri_of(tree / "pkg/gone.py")]
    assert read_shadow_text(workspace, uri_of(tree / "pkg/gone.py")).exists
    assert "pkg/gone.py" not in workspace.pending_diff()
    with pytest.raises(ShadowError, match="not pending"):
        take_some(workspace, "commit", [uri_of(tree / "pkg/gone.py")])
    assert len(workspace.pending_uris()) == 4


def test_pending_changes_name_what_changed_in_each_file(
    workspace: ShadowWorkspace, tree: Path
) -> None:
    """What the editors' pending files pickers show beside each file."""
    apply_changes(workspace, agent_changes(tree), take=True)
    changes = pending_changes(workspace)
    assert [change["uri"] for change in changes] == workspace.pending_uris()
    by_name = {change.pop("uri"): change for change in changes}
    assert by_name == {
        uri_of(tree / "pkg/new.py"): {"change": "created"},
        uri_of(tree / "pkg/util.py"): {"change": "renamed", "from": uri_of(tree / "pkg/old.py")},
        uri_of(tree / "pkg/old.py"): {
            "change": "deleted",
            "renamed_to": uri_of(tree / "pkg/util.py"),
        },
        uri_of(tree / "pkg/gone.py"): {"change": "deleted"},
        uri_of(tree / "main.py"): {"change": "edited"},
        uri_of(tree / "bin/tool.sh"): {"change": "renamed", "from": uri_of(tree / "tool.sh")},
        uri_of(tree / "tool.sh"): {"change": "deleted", "renamed_to": uri_of(tree / "bin/tool.sh")},
    }
