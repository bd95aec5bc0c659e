"""Dependencies point one way: daemon -> lsp -> (shadow_workspace, inference); the last
two never import each other, lsp or daemon. And no package has an import cycle: the
module graph (every import, function-local ones included; `if TYPE_CHECKING:` blocks
left out, they never run) has no strongly connected component of more than one module.
Inside lsp/ not even the type-only imports form a cycle: each module can be read (and
typed) without the others above it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ("daemon", "lsp", "shadow_workspace", "inference")
FORBIDDEN = {
    "shadow_workspace": {"lsp", "daemon", "inference"},
    "inference": {"lsp", "daemon", "shadow_workspace"},
    "lsp": {"daemon"},
}


def module_files() -> dict[str, Path]:
    """shadowtab.<component>.<...> -> its file, for every module of the four components."""
    found = {}
    for component in COMPONENTS:
        for path in sorted((ROOT / component).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("shadowtab", *parts))] = path
    return found


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _import_nodes(
    node: ast.AST, type_checking: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports under `node`; those under `if TYPE_CHECKING:` only with type_checking."""
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child) and not type_checking:
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _import_nodes(child, type_checking)


def imported_modules(
    name: str, path: Path, known: set[str], type_checking: bool = False
) -> set[str]:
    """The shadowtab modules `name` imports: `from a import b` counts as a.b when that is
    a module, else as a; relative imports are resolved against the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in _import_nodes(tree, type_checking):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = package
        for _ in range(max(node.level - 1, 0)):
            base = base.rpartition(".")[0]
        if node.level:
            module = f"{base}.{node.module}" if node.module else base
        else:
            module = node.module or ""
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            found.add(sub if sub in known else module)
    return {m for m in found if m in known and m != name}


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {
        name: imported_modules(name, path, known, type_checking) for name, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("component", sorted(FORBIDDEN))
def test_component_imports_point_one_way(component: str) -> None:
    graph = import_graph()
    prefix = f"shadowtab.{component}"
    offenders = {
        name: sorted({target.split(".")[1] for target in targets} & FORBIDDEN[component])
        for name, targets in graph.items()
        if name == prefix or name.startswith(prefix + ".")
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_type_checking_cycles_in_lsp() -> None:
    """Type-only imports count here: a cycle through them (Session <-> Hub) means each
    side must be understood, typed and changed with the other."""
    graph = import_graph(type_checking=True)
    lsp = {name: targets for name, targets in graph.items() if name.startswith("shadowtab.lsp")}
    assert cycles({name: targets & lsp.keys() for name, targets in lsp.items()}) == []


def test_a_cycle_would_be_caught() -> None:
    """The check itself: a function-local import back into a module that imports the
    caller is a cycle; a TYPE_CHECKING import is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import x\n"
        "def f():\n    import y\n"
    )
    names = [
        alias.name
        for node in _import_nodes(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert names == ["y"]
    typed = [
        alias.name
        for node in _import_nodes(ast.parse(source), type_checking=True)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert typed == ["x", "y"]


ENGINES = "shadowtab.inference.engines"
LLAMA_CPP = f"{ENGINES}.llama_cpp"
# Who may name the llama.cpp engine: the factory that builds it and the package's public
# (lazy) name for it. Everything else reaches llama.cpp through the Engine interface.
LLAMA_CPP_IMPORTERS = {ENGINES, "shadowtab.inference"}


def test_only_the_factory_imports_llama_cpp() -> None:
    graph = import_graph(type_checking=True)
    importers = {
        name
        for name, targets in graph.items()
        if not name.startswith(LLAMA_CPP)
        and any(t == LLAMA_CPP or t.startswith(LLAMA_CPP + ".") for t in targets)
    }
    assert importers <= LLAMA_CPP_IMPORTERS


def test_the_local_engine_is_engine_neutral() -> None:
    """local/ runs over the Runtime protocol: it imports neither llama.cpp's binding nor
    torch's runtime, and llama_cpp/ and the torch engine meet it without casts."""
    graph = import_graph(type_checking=True)
    local = f"{ENGINES}.local"
    bound = (LLAMA_CPP, f"{ENGINES}.torch")
    offenders = {
        name: sorted(t for t in targets if t.startswith(bound))
        for name, targets in graph.items()
        if name.startswith(local)
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}
    sources = [
        ROOT / "inference/engines/torch/engine.py",
        *(ROOT / "inference/engines").glob("llama_cpp/*.py"),
    ]
    # typing.cast, not ctypes.cast (a C pointer's type, as llama.cpp's callbacks need)
    typing_cast = re.compile(r"(?<!ctypes\.)\bcast\(")
    assert [p.name for p in sources if typing_cast.search(p.read_text())] == []


# training/ and benchmarks/ run from the repository root as packages (`python -m
# training.X`, `python -m benchmarks.X`); they are not in the wheel. They import the
# product as `shadowtab.*` and each other as packages, in one direction: benchmarks may
# import training (the corpora, the split, the evaluation's cases and criterion), training
# never imports benchmarks. Neither changes sys.path to reach a folder by a bare name.
TOOLS = ("training", "benchmarks")
TOOL_MAY_IMPORT = {"training": {"training"}, "benchmarks": {"benchmarks", "training"}}


def tool_files(folder: str) -> list[Path]:
    """The Python files of training/ or benchmarks/ (training's run outputs left out)."""
    return [p for p in sorted((ROOT / folder).rglob("*.py")) if "runs" not in p.parts]


def local_names() -> set[str]:
    """Names that, imported bare, can only mean a folder or file of this repository: its
    top-level folders and every module of benchmarks/ and tests/ (`common`, `code_paths`,
    `torture_kill`, ...)."""
    names = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    for folder in ("benchmarks", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(part for part in path.relative_to(ROOT / folder).with_suffix("").parts)
    return names - {"__init__", "shadowtab"}


def top_level_imports(path: Path) -> set[str]:
    """The first component of every absolute import in `path`, function-local and
    type-only ones included."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in _import_nodes(tree, type_checking=True):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def touches_sys_path(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
        for node in ast.walk(tree)
    )


@pytest.mark.parametrize("folder", TOOLS)
def test_tools_leave_sys_path_alone(folder: str) -> None:
    offenders = [p.relative_to(ROOT).as_posix() for p in tool_files(folder) if touches_sys_path(p)]
    assert offenders == []


@pytest.mark.parametrize("folder", TOOLS)
def test_tools_import_the_product_and_each_other_as_packages(folder: str) -> None:
    """No bare `lsp`, `common`, `code_paths`, `torture_kill`: the product through
    `shadowtab.`, the tools by their package names, and training never benchmarks."""
    local = local_names()
    offenders = {
        path.relative_to(ROOT).as_posix(): sorted(bad)
        for path in tool_files(folder)
        if (bad := (top_level_imports(path) & local) - TOOL_MAY_IMPORT[folder])
    }
    assert offenders == {}


def test_the_tool_checks_would_catch_a_bare_import(tmp_path: Path) -> None:
    script = tmp_path / "x.py"
    script.write_text(
        "import sys\nsys.path.insert(0, 'benchmarks')\n"
        "def f():\n    from common.corpus import records\n    import lsp.hub\n"
    )
    assert touches_sys_path(script)
    assert top_level_imports(script) & local_names() == {"common", "lsp"}
