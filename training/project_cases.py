"""Evaluation cases in their projects: each case's file whole, as it was at the commit's
parent (the corpus records hold a window of it), and where that project's history is.

The repositories come from local mirrors (bare git repositories, one per `owner+name`
folder, as the `fetch` tool brings them). The commit's own result is never used: the
case's file is the window spliced into the parent's file.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from training.eval_cases import Case, Step

MIRRORS_VARIABLE = "SHADOWTAB_EVAL_MIRRORS"
DEFAULT_MIRRORS = Path(
    os.environ.get(MIRRORS_VARIABLE, Path(__file__).resolve().parents[2] / ".mirror")
)


@dataclass(frozen=True)
class ProjectCase:
    """A case in its whole file, and where its project's files come from."""

    case: Case
    mirror: Path  # the bare repository
    parent: str  # the commit whose tree is laid out


def mirror_of(repo: str, mirrors: Path = DEFAULT_MIRRORS) -> Path | None:
    """The local mirror of `owner/name`, or None."""
    found = mirrors / repo.replace("/", "+") / "repo"
    return found if (found / "HEAD").exists() else None


def in_project(
    case: Case, record: Mapping[str, Any], mirrors: Path = DEFAULT_MIRRORS
) -> ProjectCase | None:
    """`case` moved into its whole file at the commit's parent; None when the mirror or
    the parent's file is missing, or the record's window is not the parent's text."""
    mirror = mirror_of(case.repo, mirrors)
    if mirror is None:
        return None
    parent = f"{case.commit}^"
    whole = _show(mirror, f"{parent}:{case.path}")
    if whole is None:
        return None
    lines = whole.splitlines(keepends=True)
    first = int(record.get("window_start", 1)) - 1
    window = record["before"].splitlines(keepends=True)
    if "".join(lines[first : first + len(window)]) != record["before"]:
        return None
    prefix = "".join(lines[:first])
    suffix = "".join(lines[first + len(window) :])
    return ProjectCase(spliced(case, prefix, suffix), mirror, parent)


def spliced(case: Case, prefix: str, suffix: str) -> Case:
    """The case with `prefix` before and `suffix` after each of its texts, its offsets
    moved by len(prefix)."""
    shift = len(prefix)

    def whole(text: str) -> str:
        return prefix + text + suffix

    return replace(
        case,
        opened=whole(case.opened),
        steps=tuple(Step(s.start + shift, s.end + shift, s.new_text) for s in case.steps),
        current=whole(case.current),
        cursor=case.cursor + shift,
        target=whole(case.target),
        exact_texts=tuple(whole(t) for t in case.exact_texts),
        done=tuple((a + shift, b + shift) for a, b in case.done),
    )


def project_cases(
    cases: Sequence[Case], records: Sequence[Mapping[str, Any]], mirrors: Path = DEFAULT_MIRRORS
) -> tuple[list[ProjectCase], list[Case]]:
    """The cases that could be moved into their projects, and those that could not."""
    by_commit = {(r["repo"], r["commit"]): r for r in records}
    moved: list[ProjectCase] = []
    missing: list[Case] = []
    for case in cases:
        record = by_commit.get((case.repo, case.commit))
        project = in_project(case, record, mirrors) if record is not None else None
        if project is None:
            missing.append(case)
        else:
            moved.append(project)
    return moved, missing


def _show(mirror: Path, spec: str) -> str | None:
    shown = subprocess.run(
        ["git", "-C", str(mirror), "show", spec], capture_output=True, check=False
    )
    if shown.returncode != 0:
        return None
    try:
        return shown.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None
