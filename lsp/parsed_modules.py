"""A bound on the modules parso keeps parsed in memory (the name check's jedi calls).

parso keeps every module jedi parses (the document, the stubs and modules it imports) in
`parso.cache.parser_cache`, about a megabyte each, and collects only once it holds 600
of them: on a large project the daemon would grow by hundreds of megabytes before parso
frees anything. After each jedi call the name check trims that cache to the modules used
most recently; a module trimmed and needed again is read back from parso's disk cache.

parso's own `last_used` starts as the file's modification time (a module loaded a second
ago from a file written last year looks a year old), so recency here is the later of
`last_used` and the moment this bound first saw the module."""

from __future__ import annotations

import time

from parso import cache

# Enough for a project's working set (builtins' and typing's stubs, the modules a few
# documents import): a check touches a few dozen.
MODULES_KEPT = 64


class ParsedModules:
    """Trims parso's parse cache to the `kept` modules used most recently. Call `trim`
    from the thread that runs jedi (parso's cache is not locked)."""

    def __init__(self, kept: int = MODULES_KEPT) -> None:
        if kept < 1:
            raise ValueError(f"kept must be at least 1, not {kept}")
        self.kept = kept
        self._first_seen: dict[tuple[str, object], float] = {}
        self.held_after_trim = 0  # read from any thread: parso's cache is not

    def trim(self) -> int:
        """Drop the least recently used modules past `kept`; how many were dropped."""
        now = time.time()  # parso's clock
        recency: dict[tuple[str, object], float] = {}
        for grammar, modules in cache.parser_cache.items():
            for path, item in modules.items():
                key = (grammar, path)
                seen = self._first_seen.setdefault(key, now)
                recency[key] = max(item.last_used, seen)
        self._first_seen = {key: self._first_seen[key] for key in recency}
        excess = len(recency) - self.kept
        self.held_after_trim = min(len(recency), self.kept)
        if excess <= 0:
            return 0
        for grammar, path in sorted(recency, key=recency.__getitem__)[:excess]:
            del cache.parser_cache[grammar][path]
            del self._first_seen[(grammar, path)]
        return excess

    def held(self) -> int:
        """How many modules parso holds parsed now."""
        return sum(len(modules) for modules in cache.parser_cache.values())
