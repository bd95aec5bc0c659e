"""Test-only server command: the real Hub and sessions on stdio, with a FixedPredictor
instead of the model (no user-facing switch selects it; tests run this file).

    python tests/lsp/lsp_fixed_server.py --inline TEXT ... --edit START:END:TEXT ...
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from shadowtab.daemon.cli.lsp import serve_hub_on_stdio
from shadowtab.daemon.paths import state_dir
from shadowtab.inference.engines.options import EngineOptions
from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.inference.next_edit.settings import NextEditOptions
from shadowtab.lsp.hub import Hub, HubOptions
from shadowtab.lsp.settings import DebounceOptions
from shadowtab.shadow_workspace import DEFAULT_LINTERS


def parse_edit(value: str) -> Candidate:
    start, end, text = value.split(":", 2)
    return Candidate((TextEdit(int(start), int(end), text.replace("\\n", "\n")),), 1.0, "")


def build_hub(argv: Sequence[str]) -> Hub:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inline", action="append", default=[])
    parser.add_argument("--edit", action="append", default=[], type=parse_edit)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--no-lint", action="store_true")
    # The texts these tests suggest ("one", "z") name nothing; whether the name check
    # (jedi, cold in each server: a deadline away) cuts them would depend on timing.
    parser.add_argument("--check-names", action="store_true")
    parser.add_argument("--lint-debounce-ms", type=int, default=50)
    parser.add_argument(
        "--real-model", action="store_true", help="EnginePredictor over the shipped model"
    )
    args = parser.parse_args(argv)
    predictor = FixedPredictor(
        inline_texts=[t.replace("\\n", "\n") for t in args.inline],
        edits=args.edit,
        delay_s=args.delay,
    )
    engine = EngineOptions(kind="llama.cpp", threads=2) if args.real_model else None
    options = HubOptions(
        state_dir=state_dir(),
        engine=engine or EngineOptions(kind="off"),
        linters={} if args.no_lint else dict(DEFAULT_LINTERS),
        debounce=DebounceOptions(lint_ms=args.lint_debounce_ms, warm_ms=50),
        predictor=None if args.real_model else predictor,
        next_edit=NextEditOptions(check_names=args.check_names),
    )
    return Hub(options)


async def serve_loading_late(hub: Hub) -> int:
    """Start the engine a moment after the client connected, as a daemon does when an
    editor attaches while the model loads: the session must show progress."""
    loop = asyncio.get_running_loop()
    loop.call_later(1.0, lambda: asyncio.ensure_future(hub.start()))
    try:
        clean = await hub.serve_stdio()
    finally:
        await hub.close()
    return 0 if clean else 1


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    hub = build_hub(sys.argv[1:])
    if "--real-model" in sys.argv:
        return asyncio.run(serve_loading_late(hub))
    return asyncio.run(serve_hub_on_stdio(hub))


if __name__ == "__main__":
    sys.exit(main())
