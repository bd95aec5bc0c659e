"""What the index keeps of one file's text: its lines' windows with their identifier sets,
and for Python its top-level and class-level definitions. Pure functions on text."""

from __future__ import annotations

import ast
import contextlib
import gc
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .limits import GENERATED_MARKERS

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Keywords say nothing about which code is similar; every Python file has them.
KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_DEFINITION_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class Definition:
    """A name defined at a module's top level or in a class body: `line` is 0-based,
    `text` the def/class (or assignment) line as written, `qualname` "Class.name"."""

    name: str
    qualname: str
    path: str
    line: int
    text: str


# What the index stores of a definition: Definition's fields as a plain tuple of str and
# int, which the garbage collector stops tracking. 130,000 tracked objects (a 5,000-file
# project) made each full collection stall the daemon's event loop for over 100 ms.
DefinitionRecord = tuple[str, str, str, int, str]


@dataclass(frozen=True, slots=True)
class LineWindow:
    """Lines [start, end) of a file (0-based) and the identifiers they use."""

    start: int
    end: int
    identifiers: frozenset[str]


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them ("\\n", "\\r\\n"), not str.splitlines (which also
    splits at form feeds and other separators, so its line numbers would drift)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def identifiers(text: str) -> frozenset[str]:
    return frozenset(IDENTIFIER.findall(text)) - KEYWORDS


def windows(lines: list[str], size: int, stride: int) -> list[LineWindow]:
    """Windows of `size` lines every `stride` lines, the last one ending at the file's
    end; windows without an identifier are left out."""
    per_line = [identifiers(line) for line in lines]
    found = []
    for start in range(0, max(len(lines), 1), stride):
        end = min(start + size, len(lines))
        names = frozenset().union(*per_line[start:end])
        if names:
            found.append(LineWindow(start, end, names))
        if end >= len(lines):
            break
    return found


def looks_generated(lines: list[str]) -> bool:
    head = "\n".join(lines[:5])
    return any(marker in head for marker in GENERATED_MARKERS)


def python_definitions(path: str, text: str, lines: list[str]) -> list[DefinitionRecord] | None:
    """The top-level and class-level defs, classes and assigned names; None when the text
    does not parse (a syntax error mid-edit: the caller keeps what it had)."""
    with _collector_paused():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):  # ValueError: a NUL byte
            return None
        found = _scan_definitions(tree, path, lines)
        del tree  # freed before the collector runs again
    return found


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a syntax tree is alive: a collection then promotes its
    thousands of nodes to the old generation, whose full collections (each a walk of the
    daemon's whole heap with the GIL held) then come every few files and stall the event
    loop (docs/MEASUREMENTS.md, 2026-12-04). The nodes hold no cycles: reference counting
    frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _scan_definitions(tree: ast.Module, path: str, lines: list[str]) -> list[DefinitionRecord]:
    found: list[DefinitionRecord] = []

    def add(name: str, qualname: str, node: ast.stmt) -> None:
        row = node.lineno - 1  # of the def line itself, below any decorator
        found.append((name, qualname, path, row, lines[row].strip()))

    def scan(body: list[ast.stmt], prefix: str, into_classes: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                add(node.name, prefix + node.name, node)
                if isinstance(node, ast.ClassDef) and into_classes:
                    scan(node.body, f"{node.name}.", False)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        add(target.id, prefix + target.id, node)

    scan(tree.body, "", True)
    return found


def regex_definitions(path: str, lines: list[str]) -> list[DefinitionRecord]:
    """Definitions of a file ast cannot read: `def`/`class` lines at the top level, and
    one indentation level inside a top-level class."""
    found: list[DefinitionRecord] = []
    in_class = ""
    class_indent: str | None = None
    for row, line in enumerate(lines):
        match = _DEFINITION_LINE.match(line)
        if match is None:
            continue
        indent, kind, name = match.groups()
        if not indent:
            found.append((name, name, path, row, line.strip()))
            in_class, class_indent = (name, None) if kind == "class" else ("", None)
        elif in_class and (class_indent is None or indent == class_indent):
            class_indent = indent
            found.append((name, f"{in_class}.{name}", path, row, line.strip()))
    return found
