"""Every path docs/ARCHITECTURE.md names exists, so the map of the code does not outlive a
move.

What counts as a path, and where it is looked for:

- a backticked token whose first part is a folder at the repository's root
  (`daemon/service.py`, `lsp/`, `.ci/run`, `inference/adapters/*.gguf`): from the root,
  a `*` matching at least one file;
- any other backticked token ending in `/` or in a file suffix (`cli.py`, `local/`,
  `local/kv_cache.py`): in a table row whose first cell names a folder, under that folder
  (at any depth); elsewhere, as the end of some path in the repository;
- outside backticks (the code blocks' diagrams), a word that starts with a root folder
  and ends in a file suffix: from the root.

LSP methods (`textDocument/inlineCompletion`, `shadowtab/nextEdit`) have neither a root
folder first nor a suffix, so they are not paths. Files the docs name that are not in
the repository (written at run time, or by a command) are listed in NOT_IN_REPOSITORY
with what they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SUFFIXES = (".py", ".md", ".json", ".gguf", ".sh", ".toml", ".lua", ".ts", ".mjs", ".vsix")
NOT_IN_REPOSITORY = {
    "daemon.json": "the daemon's status file, in the runtime directory",
    "shadowtab.toml": "the user's or the workspace's settings file",
    "adapter_config.json": "written by `shadowtab adapter export-peft`",
    "shadowtab-adapter.json": "written by `shadowtab adapter export-peft`",
    ".test-output/vscode-browser/": "the VS Code browser test's screenshots",
    ".test-output/vscode-pending-files/": "the VS Code pending files test's screenshots",
}
# Hidden folders are caches and test output (.git, .pytest_cache, ...), but for CI's scripts.
HIDDEN_FOLDERS_KEPT = {".ci"}
SKIPPED_FOLDERS = {"node_modules", "__pycache__"}
PATH_CHARACTERS = re.compile(r"[\w.\-/*]+")
BARE_PATH = re.compile(r"(?<![\w./-])([\w.-]+/[\w./-]*\w\.[a-z]+)\b")


@dataclass(frozen=True)
class Named:
    """A path as the doc writes it, the line it is on, and the folder of its table row."""

    text: str
    line: int
    row_folder: str | None


def _skipped(entry: Path) -> bool:
    name = entry.name
    hidden = name.startswith(".") and name not in HIDDEN_FOLDERS_KEPT
    return hidden or name in SKIPPED_FOLDERS or name.endswith(".egg-info")


def root_folders() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.is_dir() and not _skipped(p)}


def repository_paths() -> list[str]:
    """Every file and folder under the root, relative, folders ending in `/`."""
    found: list[str] = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir() and _skipped(entry):
                continue
            relative = entry.relative_to(ROOT).as_posix()
            if entry.is_dir():
                found.append(relative + "/")
                stack.append(entry)
            else:
                found.append(relative)
    return found


def _looks_like_a_path(token: str, roots: set[str]) -> bool:
    if not PATH_CHARACTERS.fullmatch(token) or token.startswith("/"):
        return False
    if token.split("/")[0] in roots and "/" in token:
        return True
    stem = token.rstrip("/").rsplit("/", 1)[-1]
    named_file = token.endswith(SUFFIXES) and not stem.startswith(".")
    return token.endswith("/") or named_file


def named_paths(markdown: str, roots: set[str]) -> Iterator[Named]:
    in_code = False
    for number, line in enumerate(markdown.splitlines(), start=1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            for match in BARE_PATH.finditer(line):
                if match.group(1).split("/")[0] in roots:
                    yield Named(match.group(1), number, None)
            continue
        row_folder = None
        if line.startswith("|"):
            first_cell = line.split("|")[1].strip()
            if first_cell.startswith("`") and first_cell.endswith("/`"):
                row_folder = first_cell.strip("`")
        for token in re.findall(r"`([^`\n]+)`", line):
            if _looks_like_a_path(token, roots):
                yield Named(token, number, row_folder)


def resolves(named: Named, roots: set[str], paths: list[str]) -> bool:
    text = named.text
    if text.split("/")[0] in roots and "/" in text:
        if "*" in text:
            return any(ROOT.glob(text))
        return (ROOT / text).exists()
    if named.row_folder is not None:
        prefix = named.row_folder
        return any(p.startswith(prefix) and p.endswith("/" + text) for p in paths)
    return any(p == text or p.endswith("/" + text) for p in paths)


def test_every_path_in_the_architecture_doc_exists() -> None:
    roots = root_folders()
    paths = repository_paths()
    missing = [
        f"line {named.line}: {named.text}"
        + (f" (under {named.row_folder})" if named.row_folder else "")
        for named in named_paths(DOC.read_text(), roots)
        if named.text not in NOT_IN_REPOSITORY and not resolves(named, roots, paths)
    ]
    assert missing == []


def test_the_rule_finds_paths_and_leaves_lsp_methods_alone() -> None:
    """The check itself, on a made-up doc: what it reads as a path and where it looks."""
    roots = {"lsp", "inference"}
    markdown = (
        "| `lsp/` | `session.py` and `gone.py` |\n"
        "`textDocument/inlineCompletion` and `shadowtab/nextEdit`, `local/kv_cache.py`,\n"
        "`inference/*.gguf`, `a b.py`, `cli_<area>.py`, `.vsix`, `~/.local/share/x.py`\n"
        "```\nshadowtab lsp (lsp/shim.py: a pump)\n```\n"
    )
    named = list(named_paths(markdown, roots))
    assert [(n.text, n.row_folder) for n in named] == [
        ("lsp/", "lsp/"),
        ("session.py", "lsp/"),
        ("gone.py", "lsp/"),
        ("local/kv_cache.py", None),
        ("inference/*.gguf", None),
        ("lsp/shim.py", None),
    ]
    paths = ["lsp/", "lsp/session.py", "inference/engines/local/kv_cache.py", "gone.py"]
    found = {n.text: resolves(n, roots, paths) for n in named if not n.text.endswith("*.gguf")}
    assert found == {
        "lsp/": (ROOT / "lsp").exists(),
        "session.py": True,
        "gone.py": False,  # it exists, but not under its row's folder
        "local/kv_cache.py": True,
        "lsp/shim.py": False,
    }
