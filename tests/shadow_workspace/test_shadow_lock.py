"""The save lock: while the model holds it no byte on disk changes; take --commit writes
the shadow; an outside change in between is a conflict that keeps both versions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shadow_helpers import disk_snapshot, uri_of
from shadowtab.shadow_workspace import (
    LockEvent,
    PathOutsideRoot,
    Range,
    ShadowWorkspace,
    TextChange,
    UnsupportedFile,
)

FILES = {"a.py": "x = 1\ny = 2\n", "pkg/b.py": "def f():\n    return 1\n", "c.txt": "héllo 😀\n"}


@pytest.fixture
def project(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    os.chmod(root / "a.py", 0o751)
    return root


edit_strategy = st.tuples(
    st.sampled_from([*FILES, "new.py"]),
    st.integers(0, 4),
    st.integers(0, 12),
    st.integers(0, 4),
    st.integers(0, 12),
    st.text(alphabet="ab \n😀é\r", max_size=8),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(edit_strategy, min_size=1, max_size=12))
def test_model_holding_the_lock_never_touches_the_disk(
    project: Path, journal_dir: Path, edits: list
) -> None:
    ws = ShadowWorkspace(project, journal_dir, watch=False)
    try:
        ws.release()
        before = disk_snapshot(project)
        for name, sl, sc, el, ec, text in edits:
            result = ws.apply_model_edit(
                uri_of(project / name), [TextChange(Range.of(sl, sc, el, ec), text)]
            )
            assert not result.written
        assert disk_snapshot(project) == before
        expected = {doc.path: doc.text for doc in ws.pending_documents()}
        taken = ws.take("commit")
        assert taken.ok and not taken.pending
        for path, text in expected.items():
            assert path.read_bytes().decode() == text
        assert not ws.has_pending()
    finally:
        ws.take("discard")
        ws.close()
        for name, text in FILES.items():
            (project / name).write_text(text)
        (project / "new.py").unlink(missing_ok=True)


def test_take_commit_keeps_mode_and_line_endings(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "crlf.py"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    os.chmod(path, 0o700)
    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(1, 0, 1, 0), "c = 3\nd = 4\n")])
    assert path.read_bytes() == b"a = 1\r\nb = 2\r\n"
    result = workspace.take("commit")
    assert result.written == [uri_of(path)]
    assert path.read_bytes() == b"a = 1\r\nc = 3\r\nd = 4\r\nb = 2\r\n"
    assert path.stat().st_mode & 0o777 == 0o700
    assert not [p for p in root.iterdir() if p.name.startswith(".crlf")]  # no temp file left


def test_outside_change_gives_conflict_and_keeps_both(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(1, 0, 1, 0), "y = 2\n")])
    path.write_text("x = 100  # changed by someone else\n")
    result = workspace.take("commit")
    assert not result.ok and result.conflicts[0]["uri"] == uri_of(path)
    assert "changed on disk" in result.conflicts[0]["error"]
    assert path.read_text() == "x = 100  # changed by someone else\n"  # disk version kept
    doc = workspace.document(uri_of(path))
    assert doc is not None and doc.text == "x = 1\ny = 2\n"  # shadow version kept
    assert result.pending == [uri_of(path)] and "+y = 2" in result.diff
    assert workspace.lock.holder == "user"
    assert workspace.lock_status()["conflicts"]


def test_take_discard_and_keep(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
    kept = workspace.take("keep")
    assert kept.pending == [uri_of(path)]
    assert "-x = 1\n+x = 2\n" in kept.diff and "a/a.py" in kept.diff
    assert path.read_text() == "x = 1\n"
    workspace.release()
    discarded = workspace.take("discard")
    assert discarded.discarded == [uri_of(path)] and not workspace.has_pending()
    assert path.read_text() == "x = 1\n"
    assert workspace.pending_diff() == ""


def test_user_holding_the_lock_writes_model_edits(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    result = workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(0, 4, 0, 5), "9")])
    assert result.written and not result.pending
    assert path.read_text() == "x = 9\n"
    assert workspace.document(uri_of(path)) is None  # clean and closed: not kept in memory
    workspace.open_document(uri_of(path), "x = 9\n# unsaved\n", 1, "python")
    path.write_text("outside\n")
    result = workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(0, 0, 0, 0), "#")])
    assert not result.written and result.conflict and path.read_text() == "outside\n"
    assert workspace.document(uri_of(path)).text == "#x = 9\n# unsaved\n"  # type: ignore[union-attr]


def test_lock_events_reach_listeners(workspace: ShadowWorkspace) -> None:
    events: list[LockEvent] = []
    remove = workspace.lock.add_listener(events.append)
    workspace.release()
    workspace.release()  # no change, no event
    workspace.toggle()
    workspace.toggle()
    remove()
    workspace.take("keep")
    assert [(e.previous, e.holder, e.reason) for e in events] == [
        ("user", "model", "release"),
        ("model", "user", "take:keep"),
        ("user", "model", "release"),
    ]


def test_bad_take_mode_is_refused(workspace: ShadowWorkspace) -> None:
    with pytest.raises(ValueError, match="take mode"):
        workspace.take("force")


def test_paths_outside_the_root_are_refused(
    workspace: ShadowWorkspace, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    (root / "link.py").symlink_to(outside)
    for uri in (uri_of(root / ".." / "outside.py"), uri_of(root / "link.py"), uri_of(outside)):
        with pytest.raises(PathOutsideRoot):
            workspace.apply_model_edit(uri, [TextChange(None, "x")])
    assert outside.read_text() == "secret = 1\n"


def test_binary_and_non_utf8_files_are_refused(workspace: ShadowWorkspace, root: Path) -> None:
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    for name in ("bin.dat", "latin1.txt"):
        before = (root / name).read_bytes()
        with pytest.raises(UnsupportedFile):
            workspace.apply_model_edit(uri_of(root / name), [TextChange(None, "x")])
        assert (root / name).read_bytes() == before


def test_model_edit_creates_a_new_file_only_on_commit(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "sub" / "new.py"
    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(None, "new = True\n")])
    assert not path.exists()
    assert "/dev/null" in workspace.pending_diff()
    assert workspace.take("commit").written == [uri_of(path)]
    assert path.read_text() == "new = True\n"


def test_editor_save_while_model_holds_reports_and_rebases(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    uri = uri_of(path)
    workspace.open_document(uri, "x = 1\n", 1, "python")
    workspace.release()
    workspace.apply_model_edit(uri, [TextChange(None, "x = 2\n")])
    path.write_text("x = 2\n")  # the editor saved its buffer (which shows the model edit)
    assert workspace.note_saved(uri) is True
    assert not workspace.has_pending()


@settings(max_examples=150, deadline=None)
@given(
    before=st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d", "é\n"]), max_size=30),
    after=st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d", "x\n"]), max_size=30),
)
def test_trimmed_diff_equals_plain_difflib(before: list[str], after: list[str]) -> None:
    import difflib

    from shadowtab.shadow_workspace.disk import DiskBase
    from shadowtab.shadow_workspace.document import ShadowDocument
    from shadowtab.shadow_workspace.pending_diff import unified_diff

    old, new = "".join(before), "".join(after)
    doc = ShadowDocument("file:///r/f.py", Path("/r/f.py"), new, 0, DiskBase("h"), old)
    plain = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f.py", "b/f.py"
    )
    expected = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in plain
    )
    assert unified_diff(doc, Path("/r")) == expected
