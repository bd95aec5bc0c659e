"""`shadowtab lsp --standalone` with the model replaced by a FixedPredictor (the stand-in
the contracts provide for tests of the server layer), so that client tests get real,
non-empty next edits and ghost text from the real server and can show and accept them.

usage: python fixed_predictor_lsp.py FILE
  suggests: next edit = replace the first "hello" in FILE's text by "goodbye";
            ghost text = ".title()" at the cursor.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from shadowtab.daemon.config import load_settings
from shadowtab.inference.next_edit.predictor import EditCandidate, FixedPredictor
from shadowtab.lsp.hub import Hub

GHOST_TEXT = ".title()"
OLD_WORD, NEW_WORD = "hello", "goodbye"


def predictor_for(text: str) -> FixedPredictor:
    start = text.index(OLD_WORD)
    edit = EditCandidate(start, start + len(OLD_WORD), NEW_WORD)
    return FixedPredictor(inline_texts=(GHOST_TEXT,), edits=(edit,))


async def serve(path: Path) -> None:
    options = load_settings(Path.cwd()).hub_options()
    options.predictor = predictor_for(path.read_text())
    hub = Hub(options)
    await hub.start()
    try:
        await hub.serve_stdio()
    finally:
        await hub.close()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
