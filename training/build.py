"""Rebuild the model in one command: mine, train (or resume), export, evaluate.

    python -m training.build --out DIR [--quick] [--steps N]                 # CPU, LoRA
    python -m training.build --device cuda --mode full --epochs 3 \\
        --data training/data --out build/gpu                                 # a GPU

DIR gets data/ (mined examples, unless --data names them), checkpoints/ (resumable),
the exported weights and evaluation.json. On the CPU it trains today's LoRA (r = 8) for
--steps; on a GPU (`--device cuda`) it runs --epochs over the whole training split in
bf16 autocast, --batch-size examples a step (64 fills an H200 with room to spare), and
prints progress and tokens/s, and with `--return-dir` writes the checkpoint there in
pieces a GPU machine can send back (transport.py); export and evaluation then run
here (training/README.md's runbook), since a GPU machine has no llama.cpp and the
`shadowtab` package is not installed there (this module imports it only to export).
`--mode lora` exports a GGUF LoRA adapter (DIR/shadowtab-next-edit.lora.gguf,
`[engine] adapter`); `--mode full` a whole GGUF model (DIR/shadowtab-full.gguf,
`[engine] model_path`). `--quick` proves the pipeline in minutes (CI runs it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

from training import train, transport
from training.checkpoint import LATEST

ADAPTER_FILE = "shadowtab-next-edit.lora.gguf"
FULL_FILE = "shadowtab-full.gguf"
QUICK_COMMITS = 40
# The CPU run's settings (training/README.md); quick: a few steps on a few short examples.
FULL_TRAINING = "--rank 8 --alpha 16 --lr 3e-4 --batch-size 2 --eval-every 20 --eval-examples 8"
QUICK_TRAINING = (
    "--max-steps 2 --limit 4 --batch-size 1 --eval-examples 1 --eval-every 2"
    " --rank 4 --alpha 8 --max-tokens 320"
)
# A GPU: warm-up, then a linear decay to a tenth over the epochs; a held-back loss
# every 100 steps on 512 examples; a checkpoint every 3 minutes.
GPU_TRAINING = (
    "--warmup 30 --decay --eval-every 100 --eval-examples 512 --checkpoint-minutes 3"
    " --print-every 20 --threads 8 --precision bf16"
)
GPU_LR = {"full": 1e-4, "lora": 5e-4}


def progress(message: str) -> None:
    print(f"[build {time.strftime('%H:%M:%S')}] {message}", flush=True)


def is_mined(data: Path) -> bool:
    return all(
        (data / f"{name}.npz").exists() or (data / f"{name}.jsonl").exists()
        for name in ("train", "heldback")
    )


def mine_step(data: Path, quick: bool, corpus: Path | None = None) -> Path:
    if is_mined(data):
        progress(f"examples already mined in {data}")
        return data
    from training import mine

    progress("mining examples" + (f" from the first {QUICK_COMMITS} commits" if quick else ""))
    limit = ["--limit", str(QUICK_COMMITS)] if quick else []
    mine.main(["--out", str(data), *limit, *(["--corpus", str(corpus)] if corpus else [])])
    return data


def train_args(data: Path, out: Path, args: argparse.Namespace) -> list[str]:
    common = ["--data", str(data), "--checkpoints", str(out / "checkpoints")]
    common += ["--log", str(out / "train.log"), "--no-commit", "--mode", args.mode]
    if args.quick:
        return [*common, *QUICK_TRAINING.split()]
    common += ["--base", args.base]
    if args.device == "cpu" and args.epochs is None:
        return [*common, "--max-steps", str(args.steps), *FULL_TRAINING.split()]
    lr = args.lr if args.lr is not None else GPU_LR[args.mode]
    shape = ["--rank", str(args.rank), "--alpha", str(2 * args.rank)]
    return [
        *common,
        *(shape if args.mode == "lora" else []),
        *["--device", args.device, "--epochs", str(args.epochs or 3.0)],
        *["--batch-size", str(args.batch_size), "--lr", str(lr)],
        *GPU_TRAINING.split(),
        *(["--precision", "auto"] if args.device == "cpu" else []),  # a CPU smoke run
    ]


def export_step(out: Path, mode: str) -> Path:
    from training import export, export_full

    saved = out / "checkpoints" / LATEST
    if mode == "full":
        return export_full.export_checkpoint(saved, out / FULL_FILE)
    return export.export_checkpoint(saved, out / ADAPTER_FILE)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=None, help="mined examples (default OUT/data)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--corpus", type=Path, default=None, help="default: ../shared/corpus")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", choices=("lora", "full"), default="lora")
    parser.add_argument("--rank", type=int, default=64, help="GPU LoRA rank (CPU: r = 8)")
    parser.add_argument(
        "--epochs", type=float, default=None, help="epochs over the whole split (GPU: 3)"
    )
    parser.add_argument("--base", default="packaged", help="tiny-random: the tests' model")
    parser.add_argument("--batch-size", type=int, default=64, help="GPU only")
    parser.add_argument("--lr", type=float, default=None, help="GPU only")
    parser.add_argument("--steps", type=int, default=3000, help="CPU only")
    parser.add_argument("--eval-n", type=int, default=20)
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument(
        "--return-dir", type=Path, default=None, help="write the checkpoint here in pieces, only"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = mine_step(args.data or args.out / "data", args.quick, args.corpus)
    progress(f"training (log: {args.out / 'train.log'}; resumes from {args.out / 'checkpoints'})")
    started = time.monotonic()
    train.main(train_args(data, args.out, args))
    progress(f"trained in {time.monotonic() - started:.0f} s")
    if args.return_dir is not None:
        pieces = transport.pack(args.out / "checkpoints" / LATEST, args.return_dir)
        sizes = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.1f} MiB" for p in pieces)
        progress(f"checkpoint in pieces: {sizes}")
        return
    exported = export_step(args.out, args.mode)
    progress(f"exported {exported} ({exported.stat().st_size / 1e6:.1f} MB)")
    if args.no_eval or args.mode == "full" or importlib.util.find_spec("llama_cpp") is None:
        progress("evaluation skipped: run python -m training.evaluate on the exported file")
        return
    from training import evaluate, mine

    progress("evaluating base vs adapter on held-back commits")
    corpus = args.corpus or mine.CORPUS
    result = evaluate.evaluate(exported, 1 if args.quick else args.eval_n, 0, corpus, 2)
    (args.out / "evaluation.json").write_text(json.dumps(result) + "\n")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
