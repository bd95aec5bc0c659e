"""Rebuild the next-edit adapter in one command: mine, train (or resume), export, evaluate.

    python -m training.build --out DIR [--quick] [--steps N]

DIR gets data/ (mined examples), checkpoints/ (resumable), the adapter
DIR/shadowtab-next-edit.lora.gguf and evaluation.json. `--quick` proves the pipeline in
minutes (a few steps on a few examples; CI runs it); its adapter is not a useful one.
Mining is skipped when DIR/data already holds examples; training resumes from
DIR/checkpoints.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from training import evaluate, export, mine, train
from training.checkpoint import LATEST

ADAPTER_FILE = "shadowtab-next-edit.lora.gguf"
QUICK_COMMITS = 40
# The run's settings (training/README.md); quick: a few steps on a few short examples.
FULL_TRAINING = "--rank 8 --alpha 16 --lr 3e-4 --batch-size 2 --eval-every 20 --eval-examples 8"
QUICK_TRAINING = (
    "--max-steps 2 --limit 4 --batch-size 1 --eval-examples 1 --eval-every 2"
    " --rank 4 --alpha 8 --max-tokens 320"
)


def progress(message: str) -> None:
    print(f"[build {time.strftime('%H:%M:%S')}] {message}", flush=True)


def mine_step(out: Path, quick: bool) -> Path:
    data = out / "data"
    if (data / "train.jsonl").exists() and (data / "heldback.jsonl").exists():
        progress(f"examples already mined in {data}")
        return data
    progress("mining examples" + (f" from the first {QUICK_COMMITS} commits" if quick else ""))
    mine.main(["--out", str(data), *(["--limit", str(QUICK_COMMITS)] if quick else [])])
    return data


def train_args(data: Path, out: Path, args: argparse.Namespace) -> list[str]:
    common = ["--data", str(data), "--checkpoints", str(out / "checkpoints")]
    common += ["--log", str(out / "train.log"), "--no-commit"]
    if args.quick:
        return [*common, *QUICK_TRAINING.split()]
    return [*common, "--max-steps", str(args.steps), *FULL_TRAINING.split()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--eval-n", type=int, default=20)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = mine_step(args.out, args.quick)
    progress(f"training (log: {args.out / 'train.log'}; resumes from {args.out / 'checkpoints'})")
    train.main(train_args(data, args.out, args))
    adapter = args.out / ADAPTER_FILE
    progress(f"exporting {adapter}")
    export.export_checkpoint(args.out / "checkpoints" / LATEST, adapter)
    progress("evaluating base vs adapter on held-back commits")
    result = evaluate.evaluate(adapter, 1 if args.quick else args.eval_n, 0, mine.CORPUS, 2)
    (args.out / "evaluation.json").write_text(json.dumps(result) + "\n")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
