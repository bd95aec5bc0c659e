"""The pending change set as a unified diff (disk text -> shadow text), as `git diff`
prints it for deleted and renamed files (`deleted file mode`, `rename from/to`), so
`git apply` and `shadowtab shadow apply` take it back. Identical leading and trailing
lines are cut before difflib runs, so a small edit in a 10 MB file diffs in
milliseconds; hunk headers are shifted back to file line numbers."""

from __future__ import annotations

import difflib
import re
import stat
from pathlib import Path

from .document import ShadowDocument

CONTEXT = 3
DEV_NULL = "/dev/null"
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def relative_name(path: Path, root: Path) -> str:
    try:
        return str(path.absolute().relative_to(root))
    except ValueError:
        return str(path)


def _common_prefix(a: list[str], b: list[str]) -> int:
    count, limit = 0, min(len(a), len(b))
    while count < limit and a[count] == b[count]:
        count += 1
    return count


def _common_suffix(a: list[str], b: list[str], prefix: int) -> int:
    count, limit = 0, min(len(a), len(b)) - prefix
    while count < limit and a[-1 - count] == b[-1 - count]:
        count += 1
    return count


def _shift_hunk(line: str, offset: int) -> str:
    match = _HUNK.match(line)
    if match is None or offset == 0:
        return line
    old_start, old_len, new_start, new_len = match.groups()
    old, new = int(old_start) + offset, int(new_start) + offset  # empty ranges too
    return f"@@ -{old}{old_len or ''} +{new}{new_len or ''} @@" + line[match.end() :]


def unified_diff(doc: ShadowDocument, root: Path) -> str:
    name = relative_name(doc.path, root)
    return text_diff(
        doc.base_text, doc.text, f"a/{name}" if doc.base.exists else DEV_NULL, f"b/{name}"
    )


def text_diff(old: str, new: str, fromfile: str, tofile: str) -> str:
    before = old.splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    head = max(0, _common_prefix(before, after) - CONTEXT)
    tail = max(0, _common_suffix(before, after, head) - CONTEXT)
    lines = difflib.unified_diff(
        before[head : len(before) - tail],
        after[head : len(after) - tail],
        fromfile=fromfile,
        tofile=tofile,
    )
    out = []
    for line in lines:
        line = _shift_hunk(line, head)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def change_set_diff(docs: list[ShadowDocument], root: Path) -> str:
    """Every pending document's diff; a rename once, as its new file's (with the old
    file's disk text as the "before")."""
    deleted = {doc.path: doc for doc in docs if doc.deleted}
    renamed = {d.renamed_from for d in docs if d.renamed_from in deleted and not d.deleted}
    parts = []
    for doc in docs:
        old = deleted.get(doc.renamed_from) if doc.renamed_from is not None else None
        if old is not None and not doc.deleted:
            parts.append(rename_diff(old, doc, root))
        elif doc.deleted and doc.path not in renamed:
            parts.append(deletion_diff(doc, root))
        elif not doc.deleted:
            parts.append(_git_header(doc, root) + unified_diff(doc, root))
    return "".join(parts)


def _git_header(doc: ShadowDocument, root: Path) -> str:
    """Every file gets git's header: after a rename without hunks, a bare `---` line
    would be read as that rename's."""
    name = relative_name(doc.path, root)
    new_file = "" if doc.base.exists else "new file mode 100644\n"
    return f"diff --git a/{name} b/{name}\n{new_file}"


def file_mode(path: Path) -> str:
    """The git mode of a file: executable or not."""
    try:
        executable = path.stat().st_mode & stat.S_IXUSR
    except OSError:
        executable = 0
    return "100755" if executable else "100644"


def deletion_diff(doc: ShadowDocument, root: Path) -> str:
    name = relative_name(doc.path, root)
    head = f"diff --git a/{name} b/{name}\ndeleted file mode {file_mode(doc.path)}\n"
    return head + text_diff(doc.base_text, "", f"a/{name}", DEV_NULL)


def rename_diff(old: ShadowDocument, new: ShadowDocument, root: Path) -> str:
    source, target = relative_name(old.path, root), relative_name(new.path, root)
    similarity = _similarity(old.base_text, new.text)
    head = (
        f"diff --git a/{source} b/{target}\nsimilarity index {similarity}%\n"
        f"rename from {source}\nrename to {target}\n"
    )
    return head + text_diff(old.base_text, new.text, f"a/{source}", f"b/{target}")


def _similarity(old: str, new: str) -> int:
    """As git reports it, roughly: the share of lines the two texts have in common."""
    if old == new:
        return 100
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return int(100 * matcher.quick_ratio())
