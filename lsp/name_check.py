"""Check the names a suggestion writes (issue 42, Build 3; JetBrains' Full Line filter):
every identifier must resolve (a local, a parameter, a module name, an import, a builtin,
a member jedi knows for the inferred type, or a name defined right there); ghost text is
cut before the first that does not, and dropped when nothing worth showing is left; a
next edit (a replacement: a cut would change what it removes) is kept whole or dropped.

name_sites.py says which names a suggestion writes; jedi says which names are visible at
a position (`complete` at the name's start, on the text with the suggestion inserted up
to the name's end; members after a dot); name_resolution.py decides. Where jedi knows
nothing (an object it cannot infer, a module it cannot find) the name passes: unknown is
not wrong.

jedi runs in a process of its own (jedi_names.py, through jedi_process.py), asked by one
thread of this module's, and each candidate has a deadline (150 ms by default): past it
the suggestion passes unchecked and `timeout` is counted; the process stops before its
next jedi call, and the call it was in still fills its cache (the first calls load
builtins and stubs, about a second or two). A call that runs on past a budget (a lookup
through a big package's star imports runs a minute) has its process killed (`stopped`),
and its document is not checked for a while (`skipped_slow`). An exception passes the
suggestion too (`error`). `counts()` is what `daemon status` shows."""

from __future__ import annotations

import asyncio
import logging
import statistics
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.lsp.jedi_process import JediProcess, Stopped
from shadowtab.lsp.name_resolution import worth_showing

logger = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 0.15
# A check still running this long after its request has its process killed: a lookup
# through a big package's star imports runs a minute and takes a gigabyte.
CALL_BUDGET_S = 3.0
# Preparing a document reads the modules it imports (a project's first, builtins' stubs
# too): it gets longer.
LOAD_BUDGET_S = 10.0
PREPARED_REMEMBERED = 1024  # documents not prepared again when opened again
SLOW_DOCUMENT_SKIP_S = 300.0  # a document whose check was stopped is not checked meanwhile
# The jedi process is replaced between requests once it holds more: parso's and jedi's
# caches are bounded, but what a lookup inferred stays with its module.
PROCESS_RSS_LIMIT_MB = 600.0
LATENCY_SAMPLES = 1024
PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
# Each candidate checked: kept whole, cut, dropped, or passed unchecked (timeout, error,
# stopped, skipped_slow); then what the jedi process did (counts() adds the processes
# started).
COUNTS = (
    "checked",
    "kept",
    "cut",
    "dropped",
    "timeout",
    "error",
    "stopped",
    "skipped_slow",
    "jedi_calls",
    "cache_hits",
    "parsed_modules_dropped",
)

# The candidates of one request, each checked: itself, a shorter copy, or None (dropped).
NamesCheck = Callable[[str, Sequence[Candidate]], Awaitable[list[Candidate | None]]]


class DeadlinePassed(Exception):
    """The candidate's deadline passed before jedi answered."""


class Unchecked(Exception):
    """The candidate passes unchecked (counted where this was raised)."""


def is_python(path: str, language_id: str) -> bool:
    return language_id == "python" or path.endswith(PYTHON_SUFFIXES)


class NameCheck:
    """The name check of one daemon: its thread, the jedi process it asks, which
    documents are skipped for a while, and the counters `daemon status` shows."""

    def __init__(
        self, deadline_s: float = DEFAULT_DEADLINE_S, modules_kept: int | None = None
    ) -> None:
        """`modules_kept`: the modules the jedi process keeps parsed (parsed_modules.py;
        None: its default)."""
        self.deadline_s = deadline_s
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="shadowtab-names")
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._latency_ms: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self._prepared: OrderedDict[str, None] = OrderedDict()  # documents, newest last
        # The thread's own: the process and its last reported state.
        self._process = JediProcess(modules_kept)
        self._slow_until: dict[str, float] = {}  # documents not checked until then
        self._held = 0
        self._rss_mb = 0.0

    def prepare(
        self, path: str, root: str | Path, text: str, language_id: str
    ) -> Future[None] | None:
        """Load what jedi needs for a newly opened Python document (the document parsed,
        the modules it imports; builtins' stubs at a project's first) now, not at its
        first check: that load takes from a tenth of a second to a second or two, past
        the check's deadline. The load's future; None when there is nothing to do (not
        Python, or the document was prepared already)."""
        if not is_python(path, language_id):
            return None
        absolute = str(Path(root) / path)
        if absolute in self._prepared:
            self._prepared.move_to_end(absolute)
            return None
        self._prepared[absolute] = None
        while len(self._prepared) > PREPARED_REMEMBERED:
            self._prepared.popitem(last=False)
        return self._executor.submit(self._load, text, absolute, str(root))

    def _load(self, text: str, path: str, root: str) -> None:
        request = {"op": "load", "text": text, "path": path, "root": root}
        try:
            self._ask(request, path, LOAD_BUDGET_S)
        except Exception as exc:  # the first check will say so again
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
        deadline, or when jedi fails, it passes unchecked."""
        if len(candidate.edits) != 1 or (candidate.path and candidate.path != path):
            return candidate  # several edits, or another file: not checked here
        started = time.perf_counter()
        job = self._executor.submit(self._verify, text, path, root, candidate, started)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(job), self.deadline_s)
        except (TimeoutError, DeadlinePassed):
            self._count("timeout")
            return candidate
        except Unchecked:
            return candidate
        except Exception as exc:  # jedi's own failures: the suggestion is not at fault
            logger.warning("name check failed (%s: %s); shown unchecked", type(exc).__name__, exc)
            self._count("error")
            return candidate
        with self._lock:
            self._latency_ms.append((time.perf_counter() - started) * 1000)
        return result

    def _verify(
        self, text: str, path: str, root: str, candidate: Candidate, started: float
    ) -> Candidate | None:
        left = self.deadline_s - (time.perf_counter() - started)
        if left <= 0:
            raise DeadlinePassed  # it waited behind another check
        if self._slow(path):
            self._count("skipped_slow")
            raise Unchecked
        edit = candidate.edit
        request = {
            "op": "kept",
            **{"text": text, "path": path, "root": root, "deadline_s": left},
            **{"start": edit.start, "end": edit.end, "new_text": edit.new_text},
        }
        keep = self._ask(request, path, CALL_BUDGET_S)
        if keep is None:
            raise DeadlinePassed
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

    def _ask(self, request: dict[str, Any], path: str, budget_s: float) -> int | None:
        """The process's `keep` (None: its deadline passed first). Unchecked past the
        budget (the process killed, the document skipped for a while);
        JediProcessFailed or RuntimeError for its failures."""
        try:
            reply = self._process.ask(request, budget_s)
        except Stopped:
            self._stopped(path, budget_s)
            raise Unchecked from None
        for name, n in dict(reply.get("counts") or {}).items():
            self._count(name, int(n))
        self._held, self._rss_mb = int(reply.get("held") or 0), float(reply.get("rss_mb") or 0)
        if self._rss_mb > PROCESS_RSS_LIMIT_MB:
            logger.info("name check: the jedi process holds %.0f MB; replaced", self._rss_mb)
            self._process.stop()
        if reply.get("op") == "error":
            raise RuntimeError(f"{reply.get('type')}: {reply.get('message')}")
        keep = reply.get("keep")
        return int(keep) if keep is not None else None

    def _stopped(self, path: str, budget_s: float) -> None:
        self._count("stopped")
        with self._lock:
            self._slow_until[path] = time.monotonic() + SLOW_DOCUMENT_SKIP_S
        logger.info(
            "name check: jedi ran past %.1f s in %s; its process was killed", budget_s, path
        )

    def _slow(self, path: str) -> bool:
        with self._lock:
            until = self._slow_until.get(path)
            if until is not None and until <= time.monotonic():
                del self._slow_until[path]
                until = None
        return until is not None

    def _count(self, name: str, n: int = 1) -> None:
        if n:
            with self._lock:
                self._counts[name] += n

    def counts(self) -> dict[str, Any]:
        """The counters, every one present, the checks' latency p50 (ms), and the jedi
        process's parsed modules and memory at its last answer."""
        with self._lock:
            table: dict[str, Any] = {name: self._counts[name] for name in COUNTS}
            times = list(self._latency_ms)
        table["p50_ms"] = round(statistics.median(times), 1) if times else None
        table["processes_started"] = self._process.started
        table["parsed_modules_held"] = self._held
        table["process_rss_mb"] = round(self._rss_mb, 1)
        return table

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._process.stop()
