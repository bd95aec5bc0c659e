"""Per-case records of the evaluation (`--dump FILE`): what each source offered, next to
what the commit did, for reading the wrong suggestions one by one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from benchmarks.common.eval_report import Observation
from training.eval_cases import Case

CONTEXT_CHARS = 240


def case_record(case: Case, observed: dict[str, Observation]) -> dict[str, Any]:
    before = case.current[max(0, case.cursor - CONTEXT_CHARS) : case.cursor]
    after = case.current[case.cursor : case.cursor + CONTEXT_CHARS]
    return {
        "mode": case.mode,
        "repo": case.repo,
        "commit": case.commit,
        "path": case.path,
        "cursor": case.cursor,
        "before_cursor": before,
        "after_cursor": after,
        "remaining": remaining_change(case.current, case.target),
        "sources": {source: _offered(case, o) for source, o in observed.items()},
    }


def remaining_change(current: str, target: str) -> dict[str, Any]:
    """The stretch between the first and last character where the two texts differ."""
    prefix = 0
    limit = min(len(current), len(target))
    while prefix < limit and current[prefix] == target[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and current[len(current) - 1 - suffix] == target[len(target) - 1 - suffix]
    ):
        suffix += 1
    return {
        "at": prefix,
        "old": current[prefix : len(current) - suffix][:CONTEXT_CHARS],
        "new": target[prefix : len(target) - suffix][:CONTEXT_CHARS],
    }


def _offered(case: Case, observation: Observation) -> list[dict[str, Any]]:
    return [
        {
            "replaced": case.current[s.edit[0] : s.edit[1]],
            "text": s.edit[2],
            "at": s.edit[0] - case.cursor,
            "correct": s.verdict.correct,
            "exact": s.verdict.exact,
            "strict": s.verdict.strict,
            "confidence": s.confidence,
            "source": s.source,
        }
        for s in observation.suggestions
    ]


class Dump:
    """Appends one JSON line per case; a no-op without a path."""

    def __init__(self, path: Path | None) -> None:
        self._file: IO[str] | None = path.open("a", encoding="utf-8") if path else None

    def write(self, case: Case, observed: dict[str, Observation]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(case_record(case, observed)) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
