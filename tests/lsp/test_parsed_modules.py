"""The bound on parso's parse cache (lsp/parsed_modules.py) with real parso on real files,
and the name check keeping jedi's parsed modules within it while it still answers."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import parso
import pytest
from parso import cache
from shadowtab.lsp.name_check import NameCheck
from shadowtab.lsp.parsed_modules import ParsedModules
from test_lsp_name_check import project, shown  # noqa: F401 (the fixture)

YEAR_2000 = 946_684_800


@pytest.fixture
def empty_parse_cache(tmp_path: Path) -> Iterator[Path]:
    """parso's cache emptied for the test and given back after it; a disk cache of the
    test's own, so what a trimmed module reads back is what this test wrote."""
    saved = {grammar: dict(modules) for grammar, modules in cache.parser_cache.items()}
    cache.parser_cache.clear()
    try:
        yield tmp_path / "parso-cache"
    finally:
        cache.parser_cache.clear()
        cache.parser_cache.update(saved)


def parsed(path: Path, disk: Path) -> None:
    parso.load_grammar().parse(path=str(path), cache=True, cache_path=disk)
    time.sleep(0.01)  # the next step is later on the clock


def old_file(folder: Path, name: str) -> Path:
    """A module last written long ago: parso starts its `last_used` at that time."""
    path = folder / name
    path.write_text(f"def {path.stem}():\n    return 1\n")
    os.utime(path, (YEAR_2000, YEAR_2000))
    return path


def cached_names(folder: Path) -> set[str]:
    return {
        Path(path).name
        for modules in cache.parser_cache.values()
        for path in modules
        if Path(path).parent == folder
    }


def test_the_modules_used_last_are_kept_even_when_their_files_are_old(
    empty_parse_cache: Path, tmp_path: Path
) -> None:
    bound = ParsedModules(kept=2)
    a, b, c = (old_file(tmp_path, name) for name in ("a.py", "b.py", "c.py"))
    for path in (a, b):
        parsed(path, empty_parse_cache)
        assert bound.trim() == 0
    parsed(a, empty_parse_cache)  # a hit: parso marks `a` used now
    parsed(c, empty_parse_cache)  # new, with a file from 2000: still the newest here
    assert bound.trim() == 1
    assert cached_names(tmp_path) == {"a.py", "c.py"}
    assert bound.held() == 2

    parsed(b, empty_parse_cache)  # trimmed, needed again: read back from the disk cache
    assert bound.trim() == 1
    assert cached_names(tmp_path) == {"b.py", "c.py"}


def test_a_bound_keeps_at_least_one_module() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ParsedModules(kept=0)


async def test_the_name_check_keeps_jedis_parsed_modules_within_its_bound(
    project: Path,  # noqa: F811 (the fixture)
) -> None:
    """jedi parses the document, builtins' stubs and the modules it imports: more than
    the bound holds, so its process trims after each call, and the check still answers
    as before (the trimmed stubs read back from parso's disk cache)."""
    check = NameCheck(deadline_s=30.0, modules_kept=4)
    try:
        for _ in range(2):
            assert await shown(check, project, "return self.cuont") == "return self."
            assert await shown(check, project, "return os.path.jion") == "return os.path."
            assert check.counts()["parsed_modules_held"] == 4
        assert check.counts()["parsed_modules_dropped"] > 0
    finally:
        check.close()
