"""The name check (lsp/name_check.py) on real code: lines of this repository's own Python
files, each cut at a random point, the rest of the line taken as ghost text at the cursor
(the line removed from the document past the cut). Every such suggestion is right, so the
share cut is the check's false-cut rate. Each is also checked with one of the names it
writes misspelled (a middle letter changed): the share cut at or before that name is the
check's recall. Prints one JSON line: both rates, the latency p50/p90 (ms, the check as
the server runs it: its thread, jedi's process and its cache, jedi warm after the first
cases), how many ran past the deadline, and how many modules parso held parsed in jedi's
process at the end (the bound `--modules-kept` trims it to; a large number compares with
no bound) and that process's memory. `--opened`: each case's document is opened first
(the server prepares it, as at didOpen, and the check comes after that load, as when the
user types a while after opening a file); without it every first check in a file pays
for that load within its deadline.

    python -m benchmarks.name_check [--cases 50] [--seed 0] [--deadline-ms 150]
        [--modules-kept 64] [--opened]"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.lexing import PYTHON, BlockState
from shadowtab.lsp.name_check import NameCheck
from shadowtab.lsp.name_sites import written_names
from shadowtab.lsp.parsed_modules import MODULES_KEPT

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("lsp", "inference", "shadow_workspace", "daemon")


@dataclass(frozen=True)
class Case:
    path: Path
    text: str  # the document, the line's rest removed
    at: int
    suggestion: str
    wrong: str  # the suggestion, one name misspelled
    wrong_at: int  # where that name starts in the suggestion


def cases(rng: random.Random, count: int) -> list[Case]:
    files = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))
    found: list[Case] = []
    while len(found) < count:
        path = rng.choice(files)
        if (case := _case(rng, path, path.read_text())) is not None:
            found.append(case)
    return found


def _case(rng: random.Random, path: Path, text: str) -> Case | None:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    start = rng.choice(starts[:-1])
    line = text[start : text.find("\n", start)]
    indent = len(line) - len(line.lstrip())
    if len(line) - indent < 10 or line.lstrip().startswith(("#", "@")):
        return None
    if BlockState(text, PYTHON).region_at(start) != "code":
        return None  # a docstring's line
    at = start + rng.randrange(indent + 1, len(line) - 1)
    suggestion = text[at : start + len(line)]
    document = text[:at] + text[start + len(line) :]
    sites = [s for s in written_names(document, at, suggestion).sites if s.start >= at]
    sites = [s for s in sites if len(s.name) >= 3]
    if not sites:
        return None
    site = rng.choice(sites)
    wrong_name = _misspelled(rng, site.name)
    offset = site.start - at
    wrong = suggestion[:offset] + wrong_name + suggestion[offset + len(site.name) :]
    return Case(path, document, at, suggestion, wrong, offset)


def _misspelled(rng: random.Random, name: str) -> str:
    """One middle letter changed: not a prefix of the name, as a typo of the model's."""
    index = rng.randrange(1, len(name) - 1)
    letter = rng.choice([c for c in "qxzjkvw" if c != name[index]])
    return name[:index] + letter + name[index + 1 :]


async def kept(names: NameCheck, case: Case, suggestion: str) -> tuple[int, float]:
    """How much of the suggestion is shown (0: dropped) and how long the check took."""
    candidate = Candidate((TextEdit(case.at, case.at, suggestion),), 1.0, "bench", kind="inline")
    started = time.perf_counter()
    checked = await names.checked(case.text, str(case.path), str(ROOT), candidate)
    ms = (time.perf_counter() - started) * 1000
    return (len(checked.edit.new_text) if checked is not None else 0), ms


async def run(
    count: int, seed: int, deadline_ms: float, modules_kept: int, opened: bool
) -> dict[str, object]:
    names = NameCheck(deadline_ms / 1000, modules_kept)
    try:
        found = cases(random.Random(seed), count)
        false_cuts = caught = 0
        times = []
        for case in found:
            if opened and (loading := names.prepare(str(case.path), ROOT, case.text, "python")):
                await asyncio.wrap_future(loading)
            shown, ms = await kept(names, case, case.suggestion)
            false_cuts += shown < len(case.suggestion.rstrip())
            shown_wrong, wrong_ms = await kept(names, case, case.wrong)
            caught += shown_wrong <= case.wrong_at
            times += [ms, wrong_ms]
        counts = names.counts()
    finally:
        names.close()
    quantiles = statistics.quantiles(times, n=10)
    return {
        "cases": len(found),
        "false_cut_rate": round(false_cuts / len(found), 3),
        "recall": round(caught / len(found), 3),
        "p50_ms": round(statistics.median(times), 1),
        "p90_ms": round(quantiles[8], 1),
        "max_ms": round(max(times), 1),
        "deadline_ms": deadline_ms,
        "opened": opened,
        "timeouts": counts["timeout"],
        "errors": counts["error"],
        "jedi_calls": counts["jedi_calls"],
        "cache_hits": counts["cache_hits"],
        "stopped": counts["stopped"],
        "parsed_modules_held": counts["parsed_modules_held"],
        "parsed_modules_dropped": counts["parsed_modules_dropped"],
        "jedi_process_rss_mb": counts["process_rss_mb"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deadline-ms", type=float, default=150.0)
    parser.add_argument("--modules-kept", type=int, default=MODULES_KEPT)
    parser.add_argument("--opened", action="store_true", help="each document opened first")
    args = parser.parse_args()
    result = run(args.cases, args.seed, args.deadline_ms, args.modules_kept, args.opened)
    print(json.dumps(asyncio.run(result)))


if __name__ == "__main__":
    main()
