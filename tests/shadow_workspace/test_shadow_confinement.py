"""The shadow workspace maps only local, absolute `file:` URIs to paths, and the model
never edits or commits through a symlink, even one that points inside the root."""

from __future__ import annotations

from pathlib import Path

import pytest
from shadow_helpers import uri_of
from shadowtab.shadow_workspace import (
    DocumentTooLarge,
    PathOutsideRoot,
    Position,
    Range,
    ShadowWorkspace,
    TextChange,
    UnsupportedFile,
    uri_to_path,
)

INSERT = [TextChange(Range(Position(0, 0), Position(0, 0)), "model\n")]


@pytest.mark.parametrize(
    "uri",
    [
        "file://somehost/tmp/x.py",
        "file://relative/x.py",
        "relative_name.py",
        "::::",
        "file:relative.py",
        "file:///tmp/../etc/x.py",
        "file:///tmp/%2e%2e/etc/x.py",
        "file:///tmp/a%00b.py",
        "file:///tmp/x.py?q=1",
        "file:///tmp/x.py#frag",
        "http://example.com/x.py",
        "untitled:Untitled-1",
    ],
)
def test_uri_to_path_refuses_what_is_not_a_local_absolute_path(uri: str) -> None:
    with pytest.raises(PathOutsideRoot):
        uri_to_path(uri)


def test_uri_to_path_accepts_local_file_uris() -> None:
    assert uri_to_path("file:///tmp/a%20b.py") == Path("/tmp/a b.py")
    assert uri_to_path("file://localhost/tmp/x.py") == Path("/tmp/x.py")


def test_model_edits_never_go_through_a_symlink(workspace: ShadowWorkspace, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_text("a\n")
    (root / "link").symlink_to(root / "sub")
    (root / "file_link.py").symlink_to(root / "sub" / "a.py")
    for target in (root / "link" / "a.py", root / "link" / "new.py", root / "file_link.py"):
        with pytest.raises(PathOutsideRoot):
            workspace.apply_model_edit(uri_of(target), INSERT)
    assert (root / "sub" / "a.py").read_text() == "a\n"
    assert not (root / "sub" / "new.py").exists()
    assert not workspace.pending_documents()


def test_a_commit_through_a_link_made_later_is_refused(
    workspace: ShadowWorkspace, root: Path, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    uri = uri_of(root / "sub" / "a.py")
    (root / "sub" / "a.py").write_text("a\n")
    workspace.release()
    workspace.apply_model_edit(uri, INSERT)
    (root / "sub").rename(root / "real")
    (root / "sub").symlink_to(root / "real")  # the folder is a link now
    result = workspace.take("commit")
    assert result.conflicts and not result.written
    assert (root / "real" / "a.py").read_text() == "a\n"
    assert workspace.has_pending()


def test_a_directory_is_not_a_model_target(workspace: ShadowWorkspace, root: Path) -> None:
    (root / "pkg").mkdir()
    with pytest.raises(UnsupportedFile):
        workspace.apply_model_edit(uri_of(root / "pkg"), INSERT)


def test_documents_over_the_size_limit_are_refused(root: Path) -> None:
    workspace = ShadowWorkspace(root, watch=False, max_document_bytes=100)
    try:
        with pytest.raises(DocumentTooLarge):
            workspace.open_document(uri_of(root / "a.py"), "é" * 60, 1)  # 120 bytes
        (root / "b.py").write_text("b" * 101)
        with pytest.raises(DocumentTooLarge):
            workspace.apply_model_edit(uri_of(root / "b.py"), INSERT)
        doc = workspace.open_document(uri_of(root / "c.py"), "c" * 90, 1)
        with pytest.raises(DocumentTooLarge):
            workspace.change_document(doc.uri, 2, [TextChange(None, "c" * 101)])
        with pytest.raises(DocumentTooLarge):
            workspace.change_document(doc.uri, 2, INSERT * 2)
        assert doc.text == "c" * 90 and doc.version == 1
        assert workspace.document(uri_of(root / "a.py")) is None
    finally:
        workspace.close()
