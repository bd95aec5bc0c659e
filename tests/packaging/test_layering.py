"""Dependencies point one way: daemon -> lsp -> (shadow_workspace, inference); the last
two never import each other, lsp or daemon."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "shadow_workspace": {"lsp", "daemon", "inference"},
    "inference": {"lsp", "daemon", "shadow_workspace"},
    "lsp": {"daemon"},
}


def imported_components(path: Path) -> set[str]:
    """The shadowtab components a module imports (absolute imports only: relative ones
    stay inside the component)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "shadowtab" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("component", sorted(FORBIDDEN))
def test_component_imports_point_one_way(component: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_components(path) & FORBIDDEN[component])
        for path in sorted((ROOT / component).glob("*.py"))
    }
    assert {path: bad for path, bad in offenders.items() if bad} == {}
