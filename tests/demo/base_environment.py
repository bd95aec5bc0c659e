"""An environment with only shadowtab's base dependencies, made from the test's own: a
`sitecustomize` on PYTHONPATH refuses to import any installed package that a plain
`pip install shadowtab` (no extras) would not bring, in the test's process tree (the
daemon and its engine worker inherit PYTHONPATH). So a default path that needs an extra's
package fails here exactly as on a fresh machine, without building a venv per test."""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]

BLOCKER = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = frozenset({blocked!r})


class BaseDependenciesOnly(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in BLOCKED:
            raise ModuleNotFoundError(
                f"No module named {{top!r}} (not a base dependency of shadowtab)", name=top
            )
        return None


sys.meta_path.insert(0, BaseDependenciesOnly())
"""


def base_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"])


def closure(requirements: Iterable[str]) -> set[str]:
    """Canonical names of the installed distributions these requirements pull in, without
    extras (markers are evaluated for this interpreter, with no extra selected)."""
    seen: set[str] = set()
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it can be imported either
        seen.add(name)
        pending.extend(Requirement(text) for text in requires)
        pending.extend(Requirement(extra) for extra in _selected_extras(requirement))
    return seen


def _selected_extras(requirement: Requirement) -> list[str]:
    """A requirement such as `llama-cpp-python[server]` brings its extra's requirements."""
    if not requirement.extras:
        return []
    selected = []
    for text in metadata.requires(requirement.name) or []:
        dependency = Requirement(text)
        marker = str(dependency.marker or "")
        if any(re.search(rf"extra == ['\"]{extra}['\"]", marker) for extra in requirement.extras):
            dependency.marker = None
            selected.append(str(dependency))
    return selected


def blocked_modules(allowed: set[str]) -> set[str]:
    """Top-level import names that only distributions outside `allowed` provide."""
    allowed = allowed | {"shadowtab", "pip", "setuptools"}
    blocked = set()
    for module, distributions in metadata.packages_distributions().items():
        if not any(canonicalize_name(d) in allowed for d in distributions):
            blocked.add(module)
    return blocked


def base_environment(folder: Path, also_block: Iterable[str] = ()) -> dict[str, str]:
    """os.environ plus PYTHONPATH to a sitecustomize that allows base dependencies only."""
    blocked = blocked_modules(closure(base_requirements())) | set(also_block)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(blocked)))
    return {**os.environ, "PYTHONPATH": str(folder)}
