"""Evaluation cases' projects on disk: the repository's files as they were at the
commit's parent (training/project_cases.py finds them), laid out in a folder the server
opens as the workspace root, and indexed as the daemon indexes a workspace.

Only Python files and `.gitignore`s are laid out: the project index reads identifiers of
any text file, but the prompt's context is chosen among Python windows, and a
Python-only tree of sympy takes 0.5 s instead of several. The commit's own result is
never in the tree: the case's file is the window spliced into the parent's file, and the
other files are the parent's.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from shadowtab.inference.next_edit.predictor import PredictionRequest
from shadowtab.lsp.project_context import choose
from shadowtab.shadow_workspace.project_index import ProjectIndex

from training.project_cases import ProjectCase

LAID_OUT = ("*.py", "*.gitignore")  # git pathspecs (a `*` also matches `/`)


def lay_out(project: ProjectCase, root: Path) -> Path:
    """The parent's Python files under `root` (created), a `.git` folder marking it as
    the project's root, and the case's file as the editor opens it; its path."""
    root.mkdir(parents=True, exist_ok=True)
    for pattern in LAID_OUT:
        archive = subprocess.run(
            [
                "git",
                "-C",
                str(project.mirror),
                "archive",
                "--format=tar",
                project.parent,
                "--",
                pattern,
            ],
            capture_output=True,
            check=False,
        )
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    (root / ".git").mkdir(exist_ok=True)
    path = root / project.case.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(project.case.opened, encoding="utf-8")
    return path


def with_context(
    request: PredictionRequest, project: ProjectCase | None, trees: ProjectTrees, budget: int
) -> PredictionRequest:
    """The request with the snippets the language server would choose from the case's
    project, indexed as the daemon indexes a workspace (none without a project)."""
    if project is None or budget <= 0:
        return request
    index, path = trees.index_at(project)
    snippets = choose(index, str(path.resolve()), request.text, request.cursor, budget)
    return replace(request, context=snippets)


class ProjectTrees:
    """One laid-out tree and project index per repository, moved from case to case to
    each case's parent (the files `git diff` names), as a workspace's index follows a
    checkout: a sympy tree takes seconds to index whole and well under one to move.
    Used where the in-process stages need the snippets the language server would choose;
    the LSP stage lays out a tree per case, which its server indexes itself."""

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch
        self._trees: dict[Path, _Tree] = {}

    def index_at(self, project: ProjectCase) -> tuple[ProjectIndex, Path]:
        """The repository's index at the case's parent, the case's file holding the
        text the editor opens; that file's path."""
        tree = self._trees.get(project.mirror)
        if tree is None:
            root = self._scratch / f"tree{len(self._trees)}"
            path = lay_out(project, root)
            index = ProjectIndex(root)
            index.start()
            index.wait_ready(300)
            tree = self._trees[project.mirror] = _Tree(root, index, project.parent, path)
            return index, path
        tree.move(project)
        return tree.index, tree.case_file

    def close(self) -> None:
        for tree in self._trees.values():
            tree.index.close()
            shutil.rmtree(tree.root, ignore_errors=True)
        self._trees.clear()


@dataclass
class _Tree:
    root: Path
    index: ProjectIndex
    commit: str  # the commit whose files are laid out (the case file aside)
    case_file: Path  # holds the last case's text instead of the commit's

    def move(self, project: ProjectCase) -> None:
        mirror = project.mirror
        changed = {str(self.case_file.relative_to(self.root))}
        changed |= _changed_paths(mirror, self.commit, project.parent)
        for relative in changed:
            (self.root / relative).unlink(missing_ok=True)
        _extract(mirror, project.parent, sorted(changed), self.root)
        self.commit = project.parent
        self.case_file = self.root / project.case.path
        self.case_file.parent.mkdir(parents=True, exist_ok=True)
        self.case_file.write_text(project.case.opened, encoding="utf-8")
        for relative in changed | {project.case.path}:
            self.index.update(self.root / relative)
        self.index.wait_idle(120)


def checkout_order(projects: Sequence[ProjectCase]) -> list[int]:
    """The indexes of `projects` by repository, then by their parent's commit time: the
    order in which ProjectTrees moves each tree least."""
    times = {
        (p.mirror, p.parent): int(_git(p.mirror, "log", "-1", "--format=%ct", p.parent) or 0)
        for p in projects
    }
    return sorted(
        range(len(projects)),
        key=lambda i: (str(projects[i].mirror), times[projects[i].mirror, projects[i].parent]),
    )


def _changed_paths(mirror: Path, old: str, new: str) -> set[str]:
    listed = _git(mirror, "diff", "--name-only", "--no-renames", "-z", old, new, "--", *LAID_OUT)
    return _names(listed)


def _extract(mirror: Path, commit: str, paths: Sequence[str], root: Path) -> None:
    """`paths` as they are at `commit` (those it lacks are left absent)."""
    if not paths:
        return
    literal = [f":(literal){p}" for p in paths]
    found = sorted(
        _names(_git(mirror, "ls-tree", "-r", "--name-only", "-z", commit, "--", *literal))
    )
    for start in range(0, len(found), 500):
        chunk = [f":(literal){p}" for p in found[start : start + 500]]
        archive = _git(mirror, "archive", "--format=tar", commit, "--", *chunk)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, check=True).stdout


def _names(listed: bytes) -> set[str]:
    return {p for p in listed.decode("utf-8", "replace").split("\0") if p}
