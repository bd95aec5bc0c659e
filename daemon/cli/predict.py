"""`shadowtab predict`: ask the model for ghost text and a next edit at a place in a
file, in this process (no daemon, no editor), through the predictor the editors get
(`engine_predictor`: propagation, the model, the gates, the `[next_edit]` settings) and
the same lint check. For trying models and prompts."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shadowtab.daemon.cli.exit_codes import EXIT_FAILURE, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from shadowtab.inference.next_edit.candidates import Candidate
    from shadowtab.inference.next_edit.predictor import PredictionRequest, Predictor
    from shadowtab.lsp.prediction_check import Check


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="predict ghost text and the next edit at FILE:LINE:COLUMN (no daemon)",
        description=__doc__,
    )
    parser.add_argument("location", help="FILE:LINE:COLUMN, 1-based; COLUMN counts characters")
    parser.add_argument(
        "--kind",
        choices=("inline", "next-edit", "both"),
        default="both",
        help="what to predict (default: both)",
    )
    parser.add_argument(
        "-n",
        "--candidates",
        type=int,
        default=3,
        help="how many candidates (1-6, default 3)",
    )
    parser.add_argument(
        "--history",
        metavar="EVENTS.json",
        help="the edits before this moment, oldest first: a JSON list of {offset, old_text, "
        "new_text, time?, path?} (offset into the text as it was just before the edit; "
        "the last one ends in the file as it is now)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how long after the last --history edit the prediction is asked, as an editor "
        "asks after a pause in typing (default 1.0)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def parse_location(location: str) -> tuple[Path, int, int]:
    """FILE:LINE:COLUMN -> (path, 0-based line, 0-based column); ValueError if malformed."""
    path, _, rest = location.rpartition(":")
    path, _, line = path.rpartition(":")
    if not path or not line.isdigit() or not rest.isdigit() or int(line) < 1 or int(rest) < 1:
        raise ValueError(f"expected FILE:LINE:COLUMN (1-based), got {location!r}")
    return Path(path), int(line) - 1, int(rest) - 1


def offset_of(text: str, line: int, column: int) -> int:
    """The str offset of (line, column), clamped to the line's end and the text's end."""
    lines = text.split("\n")
    line = min(line, len(lines) - 1)
    return sum(len(part) + 1 for part in lines[:line]) + min(column, len(lines[line]))


def read_history(path: str | None, default_path: str) -> list[Any]:
    """The --history events as next_edit Edits (ValueError when malformed)."""
    from shadowtab.inference.next_edit.events import Edit

    if path is None:
        return []
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of edit events")
    edits = []
    for index, item in enumerate(data):
        try:
            offset, old, new = item["offset"], item["old_text"], item["new_text"]
            when = float(item.get("time", index * 10.0))  # unset: separate edits
            where = str(item.get("path", default_path))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: event {index}: {exc!r}") from None
        if not isinstance(offset, int) or not isinstance(old, str) or not isinstance(new, str):
            raise ValueError(f"{path}: event {index}: offset int, old_text/new_text strings")
        edits.append(Edit(where, when, offset, old, new))
    return edits


def run(args: argparse.Namespace) -> int:
    from shadowtab.daemon.config import ConfigError, load_settings
    from shadowtab.inference import EngineError, create_engine
    from shadowtab.inference.engines.load_failure import describe_load_failure
    from shadowtab.inference.next_edit.predictor import PredictionRequest, engine_predictor
    from shadowtab.lsp.prediction_check import linters_check

    try:
        path, line, column = parse_location(args.location)
        text = path.read_text(encoding="utf-8")
        settings = load_settings(Path.cwd())
        history = read_history(args.history, str(path))
    except (ValueError, OSError, ConfigError) as exc:
        print(f"shadowtab predict: {exc}", file=sys.stderr)
        return EXIT_USAGE
    request = PredictionRequest(
        path=str(path),
        language_id=path.suffix.lstrip("."),
        text=text,
        cursor=offset_of(text, line, column),
        events=history,
        asked_at=history[-1].time + args.pause if history else None,
        max_candidates=max(1, min(args.candidates, 6)),
        invoked=True,  # asked for: ghost text's choices include the model's
    )
    try:
        engine = create_engine(settings.engine_options())
    except Exception as exc:  # any load failure: its reason and what to do, not a traceback
        print(
            f"shadowtab predict: the model failed to load: {describe_load_failure(exc)}",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    try:
        check = linters_check(settings.linter_specs(), path, request.language_id, Path.cwd())
        predictor = engine_predictor(lambda: engine, settings.next_edit)
        result = predict(predictor, request, args.kind, check)
    except EngineError as exc:
        print(f"shadowtab predict: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    print_result(result, args.json, request)
    return EXIT_OK


def predict(
    predictor: Predictor, request: PredictionRequest, kind: str, check: Check | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if kind in ("inline", "both"):
        started = time.perf_counter()
        found = _checked(predictor, request, True, check)
        result["inline"] = [c.edit.new_text for c in found]
        result["inline_seconds"] = round(time.perf_counter() - started, 3)
    if kind in ("next-edit", "both"):
        started = time.perf_counter()
        edits = _checked(predictor, request, False, check)
        result["next_edit"] = [
            {
                "old": request.text[c.edit.start : c.edit.end],
                "new": c.edit.new_text,
                "start": c.edit.start,
                "end": c.edit.end,
                "kind": c.kind,
                "confidence": round(c.confidence, 4),
                "source": c.source,
                "format": c.format,
            }
            for c in edits
        ]
        result["next_edit_seconds"] = round(time.perf_counter() - started, 3)
    return result


def _checked(
    predictor: Predictor, request: PredictionRequest, inline: bool, check: Check | None
) -> list[Candidate]:
    from shadowtab.lsp.prediction_check import checked_candidates

    async def run(call: Callable[[threading.Event], list[Candidate]]) -> list[Candidate]:
        return await asyncio.to_thread(call, threading.Event())  # as the editors' sessions

    return asyncio.run(checked_candidates(predictor, request, inline, run, check))


def print_result(result: dict[str, Any], as_json: bool, request: PredictionRequest) -> None:
    if as_json:
        print(json.dumps(result))
        return
    if "inline" in result:
        print(ghost_text_report(result["inline"], result["inline_seconds"], request))
    if "next_edit" in result:
        edits = result["next_edit"]
        print(f"next edit ({result['next_edit_seconds']} s): {len(edits) or 'none'}")
        for number, edit in enumerate(edits, 1):
            print(
                f"{number}. {edit['kind']} from {edit['source']}, confidence {edit['confidence']}"
            )
            print(edit_diff(request, edit))


def ghost_text_report(texts: list[str], seconds: float, request: PredictionRequest) -> str:
    """The cursor's line with each ghost text shown after the cursor between brackets."""
    if not texts:
        return f"ghost text ({seconds} s): none (nothing the model was sure of)"
    before = request.text[: request.cursor]
    line_number = before.count("\n") + 1
    typed = before[before.rfind("\n") + 1 :]
    lines = [f"ghost text ({seconds} s), line {line_number}:"]
    lines += [f"  {number}. {typed}[{text}]" for number, text in enumerate(texts, 1)]
    return "\n".join(lines)


def edit_diff(request: PredictionRequest, edit: dict[str, Any]) -> str:
    """The edit as a unified diff of the file, with line numbers and two lines of context."""
    after = request.text[: edit["start"]] + edit["new"] + request.text[edit["end"] :]
    diff = difflib.unified_diff(
        request.text.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=request.path,
        tofile=f"{request.path} (suggested)",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff).rstrip("\n")
