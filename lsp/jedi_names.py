"""The name check's jedi, in a process of its own (jedi_process.py starts it): it reads
requests from its socket, asks jedi which names are visible where a suggestion writes
each name, and answers how much of the suggestion to keep (name_resolution.py).

Why a process: some lookups run for a minute and take a gigabyte (a name looked up
through the hundreds of star imports in a big package's `__init__`), a Python thread
cannot be stopped safely part-way, and memory jedi once took a process keeps. A process
can be killed, and its memory goes with it. Everything jedi holds (projects, parsed
modules, stubs) lives here, none of it in the daemon.

It first loads builtins' stubs and says {"op": "ready"} (a second or two, before any
request's budget starts). Then one request at a time, each a JSON line: {"op": "kept" |
"load", ...}; each answered by one line: {"op": "kept", "keep": n | null (its deadline
passed first), "counts": {...}, "held": n, "rss_mb": x}, or {"op": "error", "type",
"message"} (jedi's own failure)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import keyword
import logging
import os
import socket
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator
from typing import Any

import jedi
from shadowtab.lsp import jedi_environment
from shadowtab.lsp.name_resolution import kept_length
from shadowtab.lsp.parsed_modules import MODULES_KEPT, ParsedModules

# The names seen at one (text, position): a hit is another candidate of the same request
# or the same text asked again, so a few requests' worth is enough. An entry is a set of
# a scope's names (~8 KB).
CACHE_ENTRIES = 256
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


class DeadlinePassed(Exception):
    """The request's deadline passed: stop before the next jedi call."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No garbage collection while jedi infers: a collection then promotes its short-lived
    objects (cycles through parent links) to the old generation, whose full collections
    (a walk of the whole heap, jedi's stubs included) then cost 0.3-0.5 s every hundred
    checks or so. Afterwards a young collection frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class JediNames:
    """jedi's projects, a cache of the names seen at (text, position), the bound on
    parso's parsed modules, and what was counted since the last answer."""

    def __init__(self, parsed_modules: ParsedModules | None = None) -> None:
        self._projects: dict[str, jedi.Project] = {}
        # jedi's default environment answers through a subprocess of its own
        self._environment = jedi_environment.StandardLibraryExtensions()
        self._cache: OrderedDict[tuple[str, int, int, int], frozenset[str]] = OrderedDict()
        self._parsed_modules = parsed_modules if parsed_modules is not None else ParsedModules()
        self.counts: Counter[str] = Counter()

    def kept(
        self, text: str, path: str, root: str, edit: tuple[int, int, str], deadline: float
    ) -> int:
        """How much of the edit's new text to keep (its text inserted in place of
        text[start:end]); DeadlinePassed when time.monotonic() reaches `deadline` before
        a jedi call."""
        start, end, new_text = edit
        rest = text[:start] + text[end:]

        def visible(scope_text: str, offset: int) -> frozenset[str]:
            if time.monotonic() >= deadline:
                raise DeadlinePassed
            return self.visible(scope_text, offset, path, root)

        with collector_paused():
            return kept_length(rest, start, new_text, visible)

    def load(self, text: str, path: str, root: str) -> None:
        """What jedi needs for a newly opened document (the document parsed, the
        modules it imports): up to a second or two, better spent before its first check."""
        with collector_paused():
            self.visible(text, len(text), path, root)

    def visible(self, text: str, offset: int, path: str, root: str) -> frozenset[str]:
        """The names jedi completes at `offset` of `text`, keywords left out."""
        key = (path, hash(text), len(text), offset)
        if (names := self._cache.get(key)) is not None:
            self._cache.move_to_end(key)
            self.counts["cache_hits"] += 1
            return names
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1)
        script = jedi.Script(
            text, path=path, project=self._project(root), environment=self._environment
        )
        self.counts["jedi_calls"] += 1
        try:
            # Names only: a completion's `type` infers it (seconds over a module's names).
            found = [c.name.rstrip("=") for c in script.complete(line, column)]
        finally:
            self.counts["parsed_modules_dropped"] += self._parsed_modules.trim()
        names = frozenset(name for name in found if not keyword.iskeyword(name))
        self._cache[key] = names
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return names

    def warm(self) -> None:
        """Load builtins' and typing's stubs, which every first call needs."""
        with collector_paused():
            jedi.Script("", environment=self._environment).complete(1, 0)
        self._parsed_modules.trim()

    def held(self) -> int:
        return self._parsed_modules.held_after_trim

    def _project(self, root: str) -> jedi.Project:
        if (project := self._projects.get(root)) is None:
            project = self._projects[root] = jedi_environment.project(root)
        return project


def answer(names: JediNames, request: dict[str, Any]) -> dict[str, Any]:
    """One request's answer, with what was counted meanwhile."""
    try:
        reply: dict[str, Any] = {"op": request.get("op"), "keep": _keep(names, request)}
    except Exception as exc:  # jedi's own failures: the daemon shows the suggestion
        reply = {"op": "error", "type": type(exc).__name__, "message": str(exc)[:500]}
    reply.update(counts=dict(names.counts), held=names.held(), rss_mb=_rss_mb())
    names.counts.clear()
    return reply


def _keep(names: JediNames, request: dict[str, Any]) -> int | None:
    """A "kept" request's length kept (None: its deadline passed first); a "load"'s None."""
    op = request.get("op")
    if op == "load":
        names.load(request["text"], request["path"], request["root"])
        return None
    if op != "kept":
        raise ValueError(f"unknown op {op!r}")
    deadline = time.monotonic() + float(request["deadline_s"])
    edit = (int(request["start"]), int(request["end"]), str(request["new_text"]))
    try:
        return names.kept(request["text"], request["path"], request["root"], edit, deadline)
    except DeadlinePassed:
        return None


def _rss_mb() -> float:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * PAGE_BYTES / 2**20


def serve(stream: io.BufferedIOBase, names: JediNames) -> None:
    """Warm, say ready, answer requests until the daemon closes its end (EOF)."""
    names.warm()
    stream.write(json.dumps({"op": "ready", "rss_mb": _rss_mb()}).encode() + b"\n")
    stream.flush()
    for line in stream:
        reply = answer(names, json.loads(line))
        stream.write(json.dumps(reply).encode() + b"\n")
        stream.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the name check's jedi process")
    parser.add_argument("--fd", type=int, required=True, help="the socket to the daemon")
    parser.add_argument("--modules-kept", type=int, default=MODULES_KEPT, help="parso's bound")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with (
        socket.socket(fileno=args.fd) as sock,
        sock.makefile("rwb") as stream,
        contextlib.suppress(BrokenPipeError, ConnectionResetError),
    ):
        serve(stream, JediNames(ParsedModules(args.modules_kept)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
