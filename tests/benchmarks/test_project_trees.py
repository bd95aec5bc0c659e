"""The evaluation's projects: a case's repository laid out at the commit's parent and
indexed, then moved to another case's parent (benchmarks/common/project_trees.py), on a
real git repository and the real project index."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks.common.project_trees import ProjectTrees, checkout_order
from training.eval_cases import Case
from training.project_cases import ProjectCase, in_project


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


def commit_files(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            git(repo, "add", name)
    count = int(git(repo, "rev-list", "--all", "--count") or 0)
    date = f"{1_700_000_000 + 60 * count} +0000"  # one minute a commit: an order to sort by
    env = {**os.environ, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD")


def case_at(commit: str, path: str, text: str) -> Case:
    return Case("line", commit, "o/r", path, text, (), text, len(text), text, (text,))


def window_names(trees: ProjectTrees, project: ProjectCase, query: str) -> set[str]:
    index, _ = trees.index_at(project)
    return {Path(m.path).name for m in index.similar_windows(query, 10)}


def test_a_tree_moves_between_parents_and_its_index_follows(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    first = commit_files(
        repo,
        {"a.py": "def alpha_helper():\n    return 1\n", "gone.py": "def beta_gone(): pass\n"},
        "one",
    )
    second = commit_files(
        repo, {"gone.py": None, "new.py": "def gamma_new():\n    return alpha_helper()\n"}, "two"
    )
    third = commit_files(repo, {"c.py": "x = 1\n"}, "three")
    early = ProjectCase(case_at(second, "a.py", "def alpha_helper():\n    return 2\n"), repo, first)
    late = ProjectCase(case_at(third, "c.py", "x = 2\n"), repo, second)
    assert checkout_order([late, early]) == [1, 0]

    trees = ProjectTrees(tmp_path / "trees")
    try:
        assert "gone.py" in window_names(trees, early, "beta_gone")
        assert "new.py" not in window_names(trees, early, "gamma_new")
        root = (tmp_path / "trees" / "tree0").resolve()
        assert (root / "a.py").read_text().endswith("return 2\n")  # the case's text

        assert "new.py" in window_names(trees, late, "gamma_new alpha_helper")
        assert "gone.py" not in window_names(trees, late, "beta_gone")
        assert not (root / "gone.py").exists()
        assert (root / "a.py").read_text().endswith("return 1\n")  # the parent's again
        assert (root / "c.py").read_text() == "x = 2\n"
    finally:
        trees.close()


def test_a_case_whose_window_is_not_its_parents_text_has_no_project(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    commit_files(work, {"a.py": "one\ntwo\nthree\n"}, "one")
    commit = commit_files(work, {"a.py": "one\nTWO\nthree\n"}, "two")
    mirrors = tmp_path / "mirrors"
    git(work, "clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo"))
    case = case_at(commit, "a.py", "two\n")
    found = in_project(case, {"before": "two\n", "window_start": 2}, mirrors)
    assert found is not None and found.case.opened == "one\ntwo\nthree\n"
    assert in_project(case, {"before": "TWO\n", "window_start": 2}, mirrors) is None
