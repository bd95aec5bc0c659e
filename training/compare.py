"""LoRA shapes and full-weight training side by side at equal training time: each
contender trains from the packaged base for the same wall-clock seconds on the same
data order (train.py's Trainer, seed 0), then is scored on the same held-back examples;
one JSON line per contender (and for the untrained base and the shipped adapter).

    nice -n 19 python -m training.compare --data training/data --contenders lora8 \
        --seconds 900 --threads 1        # one process per contender, run concurrently

Scores per kind of example: the answer loss, and `exact`, the share whose greedy answer
is the commit's, token for token, EOS included. Greedy decoding reproduces a sequence
exactly when every token of it is the argmax given the ones before, so one teacher-forced
pass gives it; on the no-change kinds (done, untouched) it is copy fidelity (a lower
bound on the byte-identical share: the same bytes in other tokens count as wrong).
On `--generate` windows with a change the answer is generated (greedy, torch) and
`lines_copied` is the share of the lines the commit leaves alone that come back exactly.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training import precision
from training.base_model import EOS_ID, PACKAGED, load_base, load_tokenizer
from training.train import Trainer, load_split, parse_args

KINDS = ("typing", "line", "keep", "next", "done", "untouched")
CHANGING = ("typing", "keep", "next")  # the region changes: lines_copied is measured there
# Each contender's recipe: LoRA as the shipped adapter was trained (lr 3e-4, alpha = 2r);
# full weights at a learning rate usual for full fine-tuning (a LoRA rate would wreck it).
CONTENDERS = {
    "lora8": ("--mode", "lora", "--rank", "8", "--alpha", "16", "--lr", "3e-4"),
    "lora64": ("--mode", "lora", "--rank", "64", "--alpha", "128", "--lr", "3e-4"),
    "full": ("--mode", "full", "--lr", "5e-5"),
}
REFERENCES = ("base", "shipped")
SHIPPED = (
    Path(__file__).resolve().parent.parent / "inference/adapters/shadowtab-next-edit.lora.gguf"
)
REGION_MARK, BELOW_MARK = "<jupyter_start>", "<jupyter_text>"  # formats/shadowtab.py


def trainer_for(name: str, data: Path, threads: int, precision_name: str, base: str) -> Trainer:
    """train.py's Trainer for a contender, writing its log to a scratch folder."""
    scratch = Path(tempfile.mkdtemp(prefix=f"compare-{name}-"))
    argv = [
        "--data", str(data), "--base", base, "--checkpoints", str(scratch / "ck"),
        "--log", str(scratch / "train.log"), "--batch-size", "2", "--warmup", "5",
        "--eval-examples", "0", "--threads", str(threads), "--precision", precision_name,
        "--no-commit", *CONTENDERS[name],
    ]  # fmt: skip
    return Trainer(parse_args(argv))


def train_for(
    trainer: Trainer, seconds: float, clock: Callable[[], float] = time.monotonic
) -> dict[str, Any]:
    """Train steps until `seconds` have passed (a step is never cut: the last may run
    over); the tokens trained, wall and CPU seconds, and the load around it."""
    trainer.model.train()
    load_before = os.getloadavg()[0]
    started, cpu_started = clock(), time.process_time()
    losses: list[float] = []
    while clock() - started < seconds:
        losses.append(trainer.train_step()["loss"])
    wall = clock() - started
    cpu = time.process_time() - cpu_started
    trainer.model.eval()
    tail = losses[-20:]
    return {
        "steps": trainer.step,
        "tokens": trainer.tokens_seen,
        "train_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "tok_s": round(trainer.tokens_seen / max(wall, 1e-9), 1),
        "tok_per_cpu_s": round(trainer.tokens_seen / max(cpu, 1e-9), 1),
        "last20_train_loss": round(sum(tail) / max(len(tail), 1), 4),
        # each step's loss is on a batch not trained on yet: the same batches for all
        "train_losses": losses[:100],
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def eval_set(held: list[dict[str, Any]], per_kind: int) -> list[dict[str, Any]]:
    """The first `per_kind` held-back examples of each kind: the same for every row."""
    return [e for kind in KINDS for e in [x for x in held if x["kind"] == kind][:per_kind]]


def answer_scores(model: Any, examples: list[dict[str, Any]], precision_name: str) -> dict:
    """Per kind and over all: mean answer loss per token, and the share of answers that
    greedy decoding reproduces exactly (every answer token the argmax)."""
    import torch

    sums: dict[str, list[float]] = {}  # kind -> [loss sum, tokens, exact, examples]
    with torch.no_grad(), precision.autocast(precision_name):
        for example in examples:
            prompt, answer = example["prompt_ids"], example["answer_ids"]
            ids = torch.tensor([prompt + answer])
            logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
            target = torch.tensor(answer)
            loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
            exact = bool((logits.argmax(-1) == target).all())
            for key in (example["kind"], "all"):
                row = sums.setdefault(key, [0.0, 0, 0, 0])
                row[0] += float(loss)
                row[1] += len(answer)
                row[2] += exact
                row[3] += 1
    return {
        key: {"n": n, "loss": round(total / count, 4), "exact": round(right / n, 3)}
        for key, (total, count, right, n) in sums.items()
    }


def copied_lines(before: str, expected: str, generated: str) -> tuple[int, int]:
    """(lines the commit leaves alone that the generated region has in place, those
    lines): a line of `expected` matched to `before` is unchanged; it is copied when
    it is also matched in `generated`."""
    want = expected.splitlines(keepends=True)
    unchanged = _matched(before.splitlines(keepends=True), want)
    copied = _matched(generated.splitlines(keepends=True), want)
    return len(unchanged & copied), len(unchanged)


def _matched(lines: list[str], want: list[str]) -> set[int]:
    matcher = difflib.SequenceMatcher(None, lines, want, autojunk=False)
    return {b + i for _, b, size in matcher.get_matching_blocks() for i in range(size)}


def region_before(prompt_ids: list[int], tokenizer: Any) -> str:
    """The region as the prompt shows it (between its markers), escaped as the answer is."""
    region = tokenizer.prompt_ids(REGION_MARK)[-1]
    below = tokenizer.prompt_ids(BELOW_MARK)[-1]
    start = prompt_ids.index(region) + 1
    return str(tokenizer.decode(prompt_ids[start : prompt_ids.index(below, start)]))


def lines_copied(
    model: Any, examples: list[dict[str, Any]], precision_name: str, tokenizer: Any
) -> dict[str, Any]:
    """Greedy generation on windows with a change: the share of unchanged lines copied."""
    import torch

    copied = total = 0
    with torch.no_grad(), precision.autocast(precision_name):
        for example in examples:
            prompt, answer = example["prompt_ids"], example["answer_ids"]
            out = model.generate(
                input_ids=torch.tensor([prompt]),
                attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                max_new_tokens=len(answer) + 16,
                do_sample=False,
                eos_token_id=EOS_ID,
                pad_token_id=EOS_ID,
            )[0, len(prompt) :].tolist()
            out = out[: out.index(EOS_ID)] if EOS_ID in out else out
            expected = tokenizer.decode([t for t in answer if t != EOS_ID])
            got, lines = copied_lines(
                region_before(prompt, tokenizer), expected, tokenizer.decode(out)
            )
            copied, total = copied + got, total + lines
    return {"windows": len(examples), "lines": total, "share": round(copied / max(total, 1), 3)}


def reference_model(name: str) -> Any:
    """The untrained base, or the base with the shipped adapter merged (as the torch
    engine loads it)."""
    model = load_base(PACKAGED)
    if name == "shipped":
        from shadowtab.inference.engines.torch.lora import attach

        model = attach(model, SHIPPED).model
    return model.eval()


def generation_set(held: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` windows with a change, as many of each changing kind."""
    each = -(-count // len(CHANGING))
    return [e for kind in CHANGING for e in [x for x in held if x["kind"] == kind][:each]][:count]


def scores(model: Any, held: list[dict[str, Any]], mode: str, generate: int) -> dict[str, Any]:
    started = time.monotonic()
    windows = generation_set(held, generate)
    return {
        "scores": answer_scores(model, held, mode),
        "lines_copied": lines_copied(model, windows, mode, load_tokenizer()),
        "eval_s": round(time.monotonic() - started, 1),
    }


def reference_row(name: str, args: argparse.Namespace, held: list[dict[str, Any]]) -> dict:
    model = reference_model(name)
    mode, _ = precision.choose(model, args.precision)
    return {"contender": name, "params": 0, **scores(model, held, mode, args.generate)}


def contender_row(name: str, args: argparse.Namespace, held: list[dict[str, Any]]) -> dict:
    trainer = trainer_for(name, args.data, args.threads, args.precision, PACKAGED)
    trainer.precision, probe = precision.choose(trainer.model, args.precision)
    row = {
        "contender": name,
        "params": sum(p.numel() for p in trainer.params),
        "precision": trainer.precision,
        "probe_s": probe,
        **train_for(trainer, args.seconds),
    }
    print(json.dumps(row), file=sys.stderr, flush=True)  # kept should scoring fail
    model = trainer.model
    if hasattr(model, "merge_and_unload"):  # the same outputs, no per-token adapter cost
        model = model.merge_and_unload()
    return row | scores(model, held, trainer.precision, args.generate)


def main(argv: list[str] | None = None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("training/data"))
    parser.add_argument(
        "--contenders",
        default="base,lora8,lora64,full",
        help=f"of {REFERENCES + tuple(CONTENDERS)}",
    )
    parser.add_argument("--seconds", type=float, default=900.0, help="training time each")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--per-kind", type=int, default=25, help="held-back examples a kind")
    parser.add_argument("--generate", type=int, default=24, help="windows generated")
    parser.add_argument("--precision", choices=precision.PRECISIONS, default="auto")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    held = eval_set(load_split(args.data, "heldback"), args.per_kind)
    for name in args.contenders.split(","):
        row = reference_row if name in REFERENCES else contender_row
        print(json.dumps(row(name, args, held)), flush=True)


if __name__ == "__main__":
    main()
