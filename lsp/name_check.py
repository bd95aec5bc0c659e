"""Check the names a suggestion writes (issue 42, Build 3; JetBrains' Full Line filter):
every identifier must resolve (a local, a parameter, a module name, an import, a builtin,
a member jedi knows for the inferred type, or a name defined right there); ghost text is
cut before the first that does not, and dropped when nothing worth showing is left; a
next edit (a replacement: a cut would change what it removes) is kept whole or dropped.

name_sites.py says which names a suggestion writes; jedi, in-process, says which names
are visible at a position (`complete` at the name's start, on the text with the
suggestion inserted up to the name's end; members after a dot). Where jedi knows nothing
(an object it cannot infer, a module it cannot find) the name passes: unknown is not
wrong.

jedi is not thread-safe and can run long on a big project, so every call runs in one
worker thread of this module's own, and each candidate has a deadline (150 ms by
default): past it the suggestion passes unchecked and `timeout` is counted; the worker
stops before its next jedi call, and the call it was in still fills the cache (the first
calls load builtins and stubs, about a second or two). An exception passes it too
(`error`). `counts()` is what `daemon status` shows."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import keyword
import logging
import re
import statistics
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import jedi
from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.lsp import jedi_environment
from shadowtab.lsp.name_sites import Site, written_names
from shadowtab.lsp.parsed_modules import ParsedModules

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 0.15
# The names seen at one (text, position): a hit is another candidate of the same request
# or the same text asked again, so a few requests' worth is enough. An entry is a set of
# a scope's names (~8 KB): a bigger cache is memory the daemon keeps for nothing.
CACHE_ENTRIES = 256
LATENCY_SAMPLES = 1024
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
# Each candidate checked: kept whole, cut, dropped, or passed unchecked (timeout, error).
COUNTS = (
    "checked",
    "kept",
    "cut",
    "dropped",
    "timeout",
    "error",
    "jedi_calls",
    "cache_hits",
    "parsed_modules_dropped",
)

# The candidates of one request, each checked: itself, a shorter copy, or None (dropped).
NamesCheck = Callable[[str, Sequence[Candidate]], Awaitable[list[Candidate | None]]]
Visible = Callable[[str, int], frozenset[str]]


class DeadlinePassed(Exception):
    """The candidate's deadline passed in the worker: stop before the next jedi call."""


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while jedi infers: a collection then promotes its short-lived
    objects (cycles through parent links) to the old generation, whose full collections
    (a walk of the daemon's heap, jedi's stubs included, with the GIL held) then stall the
    event loop 0.3-0.5 s every hundred checks or so. Afterwards a young collection frees
    them. The project index pauses the collector the same way (extract.py); either one
    that found it enabled enables it again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def is_python(path: str, language_id: str) -> bool:
    return language_id == "python" or path.endswith(PYTHON_SUFFIXES)


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


class NameCheck:
    """The name check of one daemon: its worker thread, jedi's projects, a cache of the
    names seen at (text, position), and the counters `daemon status` shows."""

    def __init__(
        self,
        deadline_s: float = DEFAULT_DEADLINE_S,
        parsed_modules: ParsedModules | None = None,
    ) -> None:
        self.deadline_s = deadline_s
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="shadowtab-names")
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._latency_ms: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._prepared: set[str] = set()  # roots whose first document was prepared
        # Worker thread only: jedi's objects and the cache.
        self._projects: dict[str, jedi.Project] = {}
        self._environment: Any = None
        self._cache: OrderedDict[tuple[str, int, int, int], frozenset[str]] = OrderedDict()
        self._parsed_modules = parsed_modules if parsed_modules is not None else ParsedModules()

    def prepare(
        self, path: str, root: str | Path, text: str, language_id: str
    ) -> Future[None] | None:
        """Load what jedi needs for a project's first Python document (builtins' stubs,
        the modules the document imports) in the worker thread, now, not at the first
        check: that load takes a second or two, past any check's deadline, and most of
        the memory the check will ever hold (so the daemon's memory settles while the
        user opens files, not minutes later). The load's future; None when there is
        nothing to do (not Python, or the project was prepared already)."""
        if not is_python(path, language_id) or str(root) in self._prepared:
            return None
        self._prepared.add(str(root))
        return self._executor.submit(self._load, text, str(Path(root) / path), str(root))

    def _load(self, text: str, path: str, root: str) -> None:
        try:
            with _collector_paused():
                self._visible(text, len(text), path, root)
        except Exception as exc:  # jedi's own failures: the first check will say so again
            logger.info("name check: preparing %s failed (%s: %s)", path, type(exc).__name__, exc)

    def for_document(self, path: str, root: str | Path, language_id: str) -> NamesCheck | None:
        """The check of one document's candidates; None for a file that is not Python."""
        if not is_python(path, language_id):
            return None
        absolute = str(Path(root) / path)

        async def check(text: str, candidates: Sequence[Candidate]) -> list[Candidate | None]:
            return [await self.checked(text, absolute, str(root), c) for c in candidates]

        return check

    async def checked(
        self, text: str, path: str, root: str, candidate: Candidate
    ) -> Candidate | None:
        """The candidate as it may be shown: itself, cut, or None (dropped). Past the
        deadline, or when jedi raises, it passes unchecked."""
        if len(candidate.edits) != 1 or (candidate.path and candidate.path != path):
            return candidate  # several edits, or another file: not checked here
        cancel = threading.Event()
        started = time.perf_counter()
        job = self._executor.submit(self._verify, text, path, root, candidate, cancel)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(job), self.deadline_s)
        except (TimeoutError, DeadlinePassed):
            cancel.set()
            self._count("timeout")
            return candidate
        except Exception as exc:  # jedi's own failures: the suggestion is not at fault
            logger.warning("name check failed (%s: %s); shown unchecked", type(exc).__name__, exc)
            self._count("error")
            return candidate
        with self._lock:
            self._latency_ms.append((time.perf_counter() - started) * 1000)
        return result

    def _verify(
        self, text: str, path: str, root: str, candidate: Candidate, cancel: threading.Event
    ) -> Candidate | None:
        edit = candidate.edit
        rest = text[: edit.start] + text[edit.end :]

        def visible(scope_text: str, offset: int) -> frozenset[str]:
            if cancel.is_set():
                raise DeadlinePassed
            return self._visible(scope_text, offset, path, root)

        with _collector_paused():
            keep = kept_length(rest, edit.start, edit.new_text, visible)
        self._count("checked")
        if keep == len(edit.new_text):
            self._count("kept")
            return candidate
        shown = edit.new_text[:keep].rstrip()
        if candidate.kind != "inline" or not worth_showing(shown):
            self._count("dropped")
            return None
        self._count("cut")
        return replace(candidate, edits=(TextEdit(edit.start, edit.end, shown),))

    def _visible(self, text: str, offset: int, path: str, root: str) -> frozenset[str]:
        """The names jedi completes at `offset` of `text` (worker thread only)."""
        key = (path, hash(text), len(text), offset)
        if (names := self._cache.get(key)) is not None:
            self._cache.move_to_end(key)
            self._count("cache_hits")
            return names
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1)
        script = jedi.Script(
            text, path=path, project=self._project(root), environment=self._interpreter()
        )
        self._count("jedi_calls")
        try:
            # Names only: a completion's `type` infers it (seconds over a module's names).
            found = [c.name.rstrip("=") for c in script.complete(line, column)]
        finally:
            if dropped := self._parsed_modules.trim():
                self._count("parsed_modules_dropped", dropped)
        names = frozenset(name for name in found if not keyword.iskeyword(name))
        self._cache[key] = names
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return names

    def _project(self, root: str) -> jedi.Project:
        if (project := self._projects.get(root)) is None:
            project = self._projects[root] = jedi_environment.project(root)
        return project

    def _interpreter(self) -> Any:
        # In-process: jedi's default environment answers through a subprocess.
        if self._environment is None:
            self._environment = jedi_environment.StandardLibraryExtensions()
        return self._environment

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def counts(self) -> dict[str, Any]:
        """The counters, every one present, and the checks' latency p50 (ms)."""
        with self._lock:
            table: dict[str, Any] = {name: self._counts[name] for name in COUNTS}
            times = list(self._latency_ms)
        table["p50_ms"] = round(statistics.median(times), 1) if times else None
        table["parsed_modules_held"] = self._parsed_modules.held_after_trim
        return table

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
