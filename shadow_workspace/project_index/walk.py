"""Walking a root for the files worth indexing: breadth first (a project's own files
before deep vendored trees), never following a symbolic link (a link's target inside the
root is walked at its own path; one outside the root or into a loop is counted), folders
of version control, dependencies, caches and virtualenvs skipped, `.gitignore` rules
(each folder's, with `.git/info/exclude`) applied with pathspec."""

from __future__ import annotations

import errno
import logging
import os
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path

from pathspec import GitIgnoreSpec

from .limits import GENERATED_SUFFIXES, SKIPPED_FOLDERS

log = logging.getLogger(__name__)


class IgnoreRules:
    """The .gitignore specs found so far, by the folder they apply under."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[Path, GitIgnoreSpec] = {}
        exclude = root / ".git" / "info" / "exclude"
        self._load(root, [exclude, root / ".gitignore"])

    def enter(self, folder: Path) -> None:
        """Read `folder`'s .gitignore (the root's was read at the start)."""
        if folder != self.root:
            self._load(folder, [folder / ".gitignore"])

    def _load(self, folder: Path, files: list[Path]) -> None:
        lines: list[str] = []
        for file in files:
            try:
                lines += file.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
        if lines:
            try:
                self._specs[folder] = GitIgnoreSpec.from_lines(lines)
            except ValueError as exc:  # a malformed pattern: the rest of the walk goes on
                log.warning("ignoring %s's .gitignore: %s", folder, exc)

    def ignored(self, path: Path, is_folder: bool) -> bool:
        for folder in (path.parent, *path.parent.parents):
            spec = self._specs.get(folder)
            if spec is not None:
                relative = path.relative_to(folder).as_posix() + ("/" if is_folder else "")
                if spec.match_file(relative):
                    return True
            if folder == self.root:
                break
        return False


def folder_skip_reason(entry: os.DirEntry[str]) -> str | None:
    reason = SKIPPED_FOLDERS.get(entry.name)
    if reason is None and os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
        reason = "virtualenv"
    return reason


def symlink_reason(path: Path, root: Path) -> str:
    """Why a link is not followed: its target loops, is missing, lies outside the root,
    or (inside the root) is walked at its own path."""
    try:
        target = path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 raises this for a loop
        return "symlink_loop"
    except OSError as exc:
        return "symlink_loop" if exc.errno == errno.ELOOP else "broken_symlink"
    if target == root or target in path.parents:
        return "symlink_loop"
    if root not in target.parents:
        return "symlink_outside_root"
    return "symlink"


def file_skip_reason(path: Path, size: int, max_bytes: int, rules: IgnoreRules) -> str | None:
    """Why a file is not read, from its name and size alone."""
    if rules.ignored(path, is_folder=False):
        return "ignored"
    if path.name.endswith(GENERATED_SUFFIXES):
        return "generated"
    if size > max_bytes:
        return "too_large"
    return None


def walk_files(
    root: Path, rules: IgnoreRules, max_bytes: int, skipped: Counter[str]
) -> Iterator[tuple[Path, os.stat_result]]:
    """Each file under `root` worth reading, with its stat; every skip counted by reason
    in `skipped` (a skipped folder counts once, whatever it holds)."""
    folders: deque[Path] = deque([root])
    while folders:
        folder = folders.popleft()
        rules.enter(folder)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:  # no read permission, or removed while walking
            log.info("project index: cannot read %s: %s", folder, exc)
            skipped["unreadable"] += 1
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    skipped[symlink_reason(path, root)] += 1
                elif entry.is_dir(follow_symlinks=False):
                    reason = folder_skip_reason(entry)
                    if reason is None and rules.ignored(path, is_folder=True):
                        reason = "ignored"
                    if reason is None:
                        folders.append(path)
                    else:
                        skipped[reason] += 1
                elif entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    reason = file_skip_reason(path, stat.st_size, max_bytes, rules)
                    if reason is None:
                        yield path, stat
                    else:
                        skipped[reason] += 1
                else:
                    skipped["not_a_file"] += 1  # a socket, a FIFO, a device
            except OSError:
                skipped["unreadable"] += 1
