"""Unified diffs for agents: parse one (several files, git style or plain `diff -u`;
new, deleted and renamed files as `git diff` writes them) with unidiff, and apply its
hunks to a text, strictly: every context and removed line must be there (a hunk may sit
a few lines away from where it says, as GNU patch allows, but no fuzz). Plain text in,
plain text out; a patch that does not apply raises PatchError and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import unidiff

from .model import ShadowError

DEV_NULL = "/dev/null"


class PatchError(ShadowError):
    """The patch is malformed, or does not apply to the shadow text."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """`lines`: (kind, line) with kind " " (context), "-" or "+"; lines keep their line
    endings. `source_start` is 1-based as in `@@ -start,len`."""

    source_start: int
    lines: tuple[tuple[str, str], ...]
    header: str

    @property
    def old_lines(self) -> tuple[str, ...]:
        return tuple(line for kind, line in self.lines if kind != "+")

    @property
    def new_lines(self) -> tuple[str, ...]:
        return tuple(line for kind, line in self.lines if kind != "-")


@dataclass(frozen=True, slots=True)
class FilePatch:
    """`path`: the file the patch leaves (a rename's new name), relative to the workspace
    root (a/ and b/ stripped) or absolute; `source`: a rename's old name; `deleted`:
    the patch removes `path`."""

    path: str
    new_file: bool
    hunks: tuple[Hunk, ...]
    source: str | None = None
    deleted: bool = False


def parse_patch(text: str) -> list[FilePatch]:
    """The files a unified diff changes. PatchError for anything we cannot apply:
    malformed hunks, binary changes, a file given twice, no file at all."""
    if not isinstance(text, str):
        raise PatchError("a patch must be text")
    try:
        parsed = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as exc:
        raise PatchError(f"malformed patch: {exc}") from None
    files = [_file_patch(patched) for patched in parsed]
    if not files:
        raise PatchError("no file changes in the patch (expected a unified diff: --- +++ @@)")
    paths = [f.path for f in files] + [f.source for f in files if f.source is not None]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise PatchError(f"the patch changes {duplicates[0]} twice: give each file once")
    return files


def _file_patch(patched: unidiff.PatchedFile) -> FilePatch:
    source, target = _strip(patched.source_file, "a/"), _strip(patched.target_file, "b/")
    name = target if target != DEV_NULL else source
    if patched.is_binary_file:
        raise PatchError(f"{name}: binary patches are refused (the shadow holds text files)")
    if source == target == DEV_NULL:
        raise PatchError("a file header names /dev/null on both sides")
    hunks = tuple(_hunk(hunk) for hunk in patched)
    if target == DEV_NULL:
        return FilePatch(source, False, hunks, deleted=True)
    renamed = source not in (DEV_NULL, target)
    if renamed and not _git_rename(patched):
        raise PatchError(
            f"{source} -> {target}: two names without `rename from`/`rename to`; give paths "
            "relative to the workspace root, git style (a/PATH, b/PATH) or the same path on "
            "both sides, or the rename as `git diff` writes it"
        )
    if not hunks and not (renamed or patched.is_added_file):
        raise PatchError(f"{name}: no hunks (@@ ... @@) for this file")
    return FilePatch(target, source == DEV_NULL, hunks, source if renamed else None)


def _git_rename(patched: unidiff.PatchedFile) -> bool:
    """The header says `rename from` (unidiff's is_rename also holds for a plain diff
    whose two names differ, which may be a typo as well as a rename)."""
    info = patched.patch_info
    return info is not None and any(line.startswith("rename from ") for line in info)


def _strip(path: str | None, prefix: str) -> str:
    if path is None:
        raise PatchError("a file header (--- / +++) has no path")
    path = path.strip()
    if len(path) > 1 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return path[len(prefix) :] if path.startswith(prefix) else path


def _hunk(hunk: unidiff.Hunk) -> Hunk:
    lines: list[tuple[str, str]] = []
    for line in hunk:
        kind, value = line.line_type, line.value
        if kind == "\\":  # "\ No newline at end of file": the line before has none
            if lines:
                lines[-1] = (lines[-1][0], _without_eol(lines[-1][1]))
        elif kind in (" ", "-", "+"):
            lines.append((kind, value))
    header = (
        f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
    )
    return Hunk(hunk.source_start, tuple(lines), header)


def _without_eol(line: str) -> str:
    return line[:-2] if line.endswith("\r\n") else line.rstrip("\n")


def _same(a: str, b: str) -> bool:
    """Equal but for the line ending (a CRLF file patched from an LF diff still matches;
    the workspace writes the file's own line endings)."""
    return a.rstrip("\r\n") == b.rstrip("\r\n")


def apply_hunks(text: str, hunks: tuple[Hunk, ...] | list[Hunk], name: str) -> str:
    """`text` with every hunk applied in order, or PatchError naming the first hunk that
    does not apply and the line that differs."""
    lines = text.splitlines(keepends=True)
    output: list[str] = []
    cursor = 0  # lines before this index are done (copied or replaced)
    offset = 0  # how far the hunks so far moved from where their headers said
    for number, hunk in enumerate(hunks, 1):
        wanted = max(hunk.source_start - (1 if hunk.old_lines else 0), 0) + offset
        found = _find(lines, hunk.old_lines, wanted, cursor)
        if found is None:
            raise PatchError(_mismatch(lines, hunk, wanted, number, name))
        output.extend(lines[cursor:found])
        output.extend(_joined(output, _replacement(hunk, lines, found)))
        cursor = found + len(hunk.old_lines)
        offset = found - (wanted - offset)
    output.extend(lines[cursor:])
    return "".join(output)


def _replacement(hunk: Hunk, lines: list[str], at: int) -> tuple[str, ...]:
    """The hunk's new lines, its context lines as the text has them (their line endings
    stay the text's own)."""
    new: list[str] = []
    for kind, line in hunk.lines:
        if kind == " ":
            new.append(lines[at])
        if kind != "+":
            at += 1
        if kind == "+":
            new.append(line)
    return tuple(new)


def _joined(done: list[str], new_lines: tuple[str, ...]) -> list[str]:
    """New lines after a last line that had no line ending: give it one first."""
    if done and new_lines and not done[-1].endswith(("\n", "\r")):
        done[-1] += "\n"
    return list(new_lines)


def _matches_at(lines: list[str], old: tuple[str, ...], at: int) -> bool:
    if at < 0 or at + len(old) > len(lines):
        return False
    return all(_same(lines[at + i], line) for i, line in enumerate(old))


def _find(lines: list[str], old: tuple[str, ...], wanted: int, floor: int) -> int | None:
    """Where `old` sits, nearest `wanted` first, never before `floor` (the end of the
    previous hunk: hunks apply in order and never overlap)."""
    if not old:
        return min(max(wanted, floor), len(lines))
    for distance in range(len(lines) + 1):
        for at in (wanted - distance, wanted + distance) if distance else (wanted,):
            if at >= floor and _matches_at(lines, old, at):
                return at
    return None


def _mismatch(lines: list[str], hunk: Hunk, wanted: int, number: int, name: str) -> str:
    where = f"hunk {number} of {name} ({hunk.header}) does not apply"
    for i, expected in enumerate(hunk.old_lines):
        at = wanted + i
        if at >= len(lines):
            return (
                f"{where}: the patch expects line {at + 1} to be {_show(expected)}, "
                f"the text ends at line {len(lines)}"
            )
        if not _same(lines[at], expected):
            return (
                f"{where}: line {at + 1} is {_show(lines[at])}, the patch expects {_show(expected)}"
            )
    return f"{where}: its lines are not found in the text"


def _show(line: str) -> str:
    return repr(line.rstrip("\r\n")[:120])
