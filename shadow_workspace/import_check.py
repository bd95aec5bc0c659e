"""Imports of the workspace's own Python modules checked against the shadow, not the
disk: a module the agent renamed or deleted in the shadow is gone for this check, and
one it created (or a rename's new name) is there, although the disk says otherwise.
The per-file linters read one text on stdin and never see other files, so an import of
a module the same change set moved would pass them.

Only imports whose first name is the workspace's own (a module or a folder at the root)
are checked; anything else (the standard library, installed packages) is left to the
linters. Relative imports are resolved from the file's folder."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

from .line_text import utf16_len
from .model import Diagnostic, Range

SOURCE = "shadowtab-imports"
Exists = Callable[[Path], bool]  # a file exists in the shadow (pending edits included)


def check_imports(path: Path, text: str, root: Path, exists: Exists) -> list[Diagnostic]:
    """A diagnostic for each import of a workspace module the shadow does not hold."""
    if path.suffix != ".py":
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):  # the syntax linter reports it
        return []
    lines = text.splitlines()
    found = []
    for node, module in _imports(tree, path, root):
        if _is_local(module, root, exists) and not _resolves(module, root, exists):
            found.append(_diagnostic(node, module, lines))
    return found


def _imports(tree: ast.AST, path: Path, root: Path) -> Iterator[tuple[ast.stmt, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, path, root)
            if module is not None:
                yield node, module


def _absolute(node: ast.ImportFrom, path: Path, root: Path) -> str | None:
    """The module `from ... import` names, as an absolute dotted name from the root."""
    if not node.level:
        return node.module
    folder = path.parent
    for _ in range(node.level - 1):
        folder = folder.parent
    try:
        parts = list(folder.relative_to(root).parts)
    except ValueError:  # above the root: not the workspace's to check
        return None
    name = ".".join([*parts, *(node.module or "").split(".")]).strip(".")
    return name or None


def _is_local(module: str, root: Path, exists: Exists) -> bool:
    first = module.split(".")[0]
    return (root / first).is_dir() or exists(root / f"{first}.py")


def _resolves(module: str, root: Path, exists: Exists) -> bool:
    """A module file, a package's __init__, or a folder (a namespace package)."""
    base = root.joinpath(*module.split("."))
    if exists(base.with_name(base.name + ".py")) or exists(base / "__init__.py"):
        return True
    return base.is_dir()


def _diagnostic(node: ast.stmt, module: str, lines: list[str]) -> Diagnostic:
    line = node.lineno - 1
    end = utf16_len(lines[line]) if line < len(lines) else 0
    message = (
        f"module {module!r} is not in the workspace as the shadow holds it "
        "(deleted or renamed by pending edits?)"
    )
    return Diagnostic(Range.of(line, 0, line, end), message, 1, SOURCE, "unresolved-import")
