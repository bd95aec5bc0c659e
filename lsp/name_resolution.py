"""How much of a suggestion to keep, given the names visible where it writes each name
(name_check.py's rule, run where jedi runs: jedi_names.py): up to the first name that
does not resolve. Where nothing is known (an object jedi cannot infer) a name passes:
unknown is not wrong."""

from __future__ import annotations

import re
from collections.abc import Callable

from shadowtab.lsp.name_sites import Site, written_names

# visible(text, offset): the names jedi sees at offset of text (empty: it knows nothing)
Visible = Callable[[str, int], frozenset[str]]


def kept_length(text: str, at: int, new_text: str, visible: Visible) -> int:
    """How much of `new_text` (inserted at `at`) to keep: up to the first name it writes
    that does not resolve, all of it when every name does. `visible(text, offset)`: the
    names jedi sees at offset of text (empty: it knows nothing there)."""
    written = written_names(text, at, new_text)
    line_names: dict[int, frozenset[str]] = {}  # a line's first plain name's call, reused
    for site in written.sites:
        if not site.member and site.name in written.defined:
            continue
        line = text.count("\n", 0, min(site.start, at)) + new_text.count(
            "\n", 0, max(0, site.start - at)
        )
        seen = line_names.get(line)
        if not site.member and seen is not None and _resolves(site, seen):
            continue  # a name seen by this line's first call: the same scope, no call
        # The name itself in the text: jedi puts a position on a line with nothing yet
        # (the end of a function's body) in the module's scope.
        scope_text = text[:at] + new_text[: max(0, site.end - at)] + text[at:]
        names = visible(scope_text, site.start)
        if not site.member and names:
            line_names.setdefault(line, names)
        if not _resolves(site, names) and not _used_in(text, site):
            return max(0, site.start - at)
    return len(new_text)


def _used_in(text: str, site: Site) -> bool:
    """The document already uses the name (as a member: after a dot): what jedi cannot
    see (a star import, a name set through globals()) the user has written, and a model
    that repeats it is not making it up."""
    dot = r"\.\s*" if site.member else r"(?<![\w.])"
    return re.search(dot + re.escape(site.name) + r"(?!\w)", text) is not None


def _resolves(site: Site, names: frozenset[str]) -> bool:
    if not names:
        # jedi knows nothing here (an object it cannot infer), or only keywords fit (a
        # name right after an expression in broken code: lint's business, not ours).
        return True
    if site.name in names:
        return True
    if site.member and _dynamic(names):
        return True
    return site.partial and any(name.startswith(site.name) for name in names)


def _dynamic(members: frozenset[str]) -> bool:
    """Members jedi cannot list: a `__getattr__` (argparse.Namespace, a proxy), or only
    dunders (jedi inferred None or a bare object, as for `x: T | None` after a check
    for None that it does not follow)."""
    return "__getattr__" in members or all(_dunder(name) for name in members)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def worth_showing(text: str) -> bool:
    """A cut that leaves only whitespace and punctuation is not worth a suggestion."""
    return any(c.isalnum() or c == "_" for c in text)
