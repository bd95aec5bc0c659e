"""The product files a model-backed ghost text request runs through: as
benchmarks/code_paths.py counts them (every function called, in any thread, from the
request read off the socket until it is answered and settled), but with the real
packaged model instead of a fixed predictor. Prints one JSON line.

    python -m benchmarks.model_code_paths

The engine runs twice: in this process (`engine.process = "inline"`: the model's side,
which the daemon's worker process runs, is traced here too) and in its worker process
(the daemon's side of the worker transport). The figure is the union: the files of both
processes a request crosses, less the worker process's own frame loop, which is named
statically (`WORKER_SIDE`). The request is asked as Invoked, so the model runs even when
a cheaper source (typed-through, repetition) answers first. No linters, as code_paths.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.code_paths import Recorder
from benchmarks.common.eval_lsp import connect, initialize_params

TEXT = (
    "import os\n\n\n"
    "def read_config(path):\n"
    '    """Read the configuration file at path."""\n'
    "    with open(path) as handle:\n"
    "        return handle.read()\n\n\n"
    "def main():\n"
    "    config = read_config(os.path.join(os.getcwd(), 'config.toml'))\n"
    "    print(con"
)
# The worker process's side of a request: its frame loop, which the union of the two
# traces cannot see (the inline trace runs no worker, the worker trace not its child).
WORKER_SIDE = ("inference/engines/worker/child.py",)
LOAD_TIMEOUT_S = 900.0


def build_hub(state: Path, data: Path, process: str) -> Any:
    from shadowtab.inference import EngineOptions
    from shadowtab.lsp.hub import Hub, HubOptions

    engine = EngineOptions(process=process, data_dir=data)  # type: ignore[arg-type]
    return Hub(HubOptions(state_dir=state, engine=engine, linters={}))


async def wait_ready(hub: Any) -> None:
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while hub.engine_host.state != "ready":
        if hub.engine_host.state == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"the engine did not load: {hub.engine_host.error}")
        await asyncio.sleep(0.2)


async def ghost_text(client: Any, uri: str) -> None:
    lines = TEXT.split("\n")
    params = {
        "textDocument": {"uri": uri},
        "position": {"line": len(lines) - 1, "character": len(lines[-1])},
        "context": {"triggerKind": 1},  # Invoked: the model runs
    }
    reply = await client.call("textDocument/inlineCompletion", params)
    if "result" not in reply:
        raise RuntimeError(f"inline completion failed: {reply}")


async def measure(recorder: Recorder, scratch: Path, data: Path, process: str) -> list[str]:
    hub = build_hub(scratch / f"state-{process}", data, process)
    await hub.start()
    try:
        client, _ = await connect(hub)
        root = scratch / f"root-{process}"
        (root / ".git").mkdir(parents=True)
        await client.call("initialize", initialize_params(root.as_uri()))
        client.notify("initialized", {})
        await wait_ready(hub)
        source = root / "main.py"
        source.write_text(TEXT)
        item = {"uri": source.as_uri(), "languageId": "python", "version": 1, "text": TEXT}
        client.notify("textDocument/didOpen", {"textDocument": item})
        for _ in range(2):  # untraced: lazy imports, first-time paths, the warm
            await ghost_text(client, source.as_uri())
            await asyncio.sleep(1.0)
        files = await recorder.trace(lambda: ghost_text(client, source.as_uri()))
        client.writer.close()
        return files
    finally:
        await hub.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "shadowtab-code-paths-data",
        help="where the converted weights are kept between runs",
    )
    args = parser.parse_args()
    recorder = Recorder()
    sys.setprofile(recorder)
    threading.setprofile(recorder)
    try:
        with tempfile.TemporaryDirectory(prefix="model-paths-") as scratch:
            inline = asyncio.run(measure(recorder, Path(scratch), args.data_dir, "inline"))
            worker = asyncio.run(measure(recorder, Path(scratch), args.data_dir, "worker"))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    union = sorted({*inline, *worker, *WORKER_SIDE})
    print(
        json.dumps(
            {
                "benchmark": "model_code_paths",
                "ghost_text": {"count": len(union), "files": union},
                "inline_process_count": len(inline),
                "worker_daemon_side_count": len(worker),
            }
        )
    )


if __name__ == "__main__":
    main()
