"""`shadowtab mcp` serves its workspace roots only: the paths an agent gives are placed
in one of them, or refused before anything reaches the daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from shadowtab.daemon.mcp_server import Roots


@pytest.fixture
def roots(tmp_path: Path) -> Roots:
    for name in ("one", "two", "one/inner"):
        (tmp_path / name).mkdir()
    return Roots((tmp_path / "one", tmp_path / "two", tmp_path / "one" / "inner"))


def test_relative_paths_are_in_the_first_root(roots: Roots, tmp_path: Path) -> None:
    assert roots.locate("pkg/mod.py") == (str(tmp_path / "one"), str(tmp_path / "one/pkg/mod.py"))


def test_absolute_paths_pick_the_innermost_root(roots: Roots, tmp_path: Path) -> None:
    assert roots.locate(str(tmp_path / "two/a.py"))[0] == str(tmp_path / "two")
    assert roots.locate(str(tmp_path / "one/inner/b.py"))[0] == str(tmp_path / "one/inner")


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", "", "   "])
def test_outside_or_empty_is_refused(roots: Roots, path: str) -> None:
    with pytest.raises(ToolError):
        roots.locate(path)


def test_a_link_above_the_root_names_the_same_root(roots: Roots, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(tmp_path / "one")
    assert roots.locate(str(tmp_path / "alias/c.py")) == (
        str(tmp_path / "one"),
        str(tmp_path / "one/c.py"),
    )
    assert roots.root(str(tmp_path / "alias")) == str(tmp_path / "one")


def test_root_argument(roots: Roots, tmp_path: Path) -> None:
    assert roots.root(None) == str(tmp_path / "one")
    with pytest.raises(ToolError, match="not a workspace root"):
        roots.root(str(tmp_path))


def test_a_link_below_the_root_is_left_for_the_daemon_to_refuse(
    roots: Roots, tmp_path: Path
) -> None:
    (tmp_path / "one" / "link").symlink_to(tmp_path / "two")
    assert roots.locate(str(tmp_path / "one/link/d.py")) == (
        str(tmp_path / "one"),
        str(tmp_path / "one/link/d.py"),
    )
