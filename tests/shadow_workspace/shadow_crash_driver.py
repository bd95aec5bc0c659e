"""A child process for the crash test: a ShadowWorkspace with a journal that takes model
edits (and, in "commit" mode, commits them) in a loop, printing an ack after each call
returns. The test kills it with SIGKILL at random points."""

from __future__ import annotations

import sys
from pathlib import Path

from shadowtab.shadow_workspace import Range, ShadowWorkspace, TextChange, path_to_uri


def main(root: Path, journal_dir: Path, mode: str, files: list[str], start: int) -> None:
    ws = ShadowWorkspace(root, journal_dir, watch=False)  # replays the journal
    print("ready", flush=True)
    ws.release()
    counter = start
    while True:
        for name in files:
            uri = path_to_uri((root / name).absolute())
            ws.apply_model_edit(uri, [TextChange(Range.of(0, 0, 0, 0), f"edit {counter}\n")])
            print(f"ack {counter} {name}", flush=True)
            counter += 1
        if mode == "commit":
            result = ws.take("commit")
            print(f"commit {len(result.written)} {len(result.conflicts)}", flush=True)
            ws.release()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[5:], int(sys.argv[4]))
