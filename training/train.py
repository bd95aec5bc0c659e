"""LoRA fine-tuning of the packaged model on mined next-edit examples (CPU, bf16
autocast or fp32, whichever a probe times faster), resumable.

    nohup nice -n 15 python -m training.train --data training/data \
        --checkpoints training/checkpoints --log training/runs/train.log &

Logs one JSON line per step (loss on the answer tokens) and a held-back evaluation
loss every --eval-every steps; writes and commits a checkpoint every
--checkpoint-minutes and when stopped with SIGTERM/SIGINT; restarted with the same
command it resumes from training/checkpoints/adapter-latest.pt.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import time
from pathlib import Path
from typing import Any

from training import checkpoint, precision
from training.base_model import load_model
from training.batches import BatchSchedule, collate, read_examples
from training.lora import AdapterShape, adapter_state, attach, load_adapter_state


class StopFlag:
    """Set by SIGTERM/SIGINT while training: the loop finishes its step, checkpoints and
    exits; the previous handlers come back after (the build runs training in-process)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.stop = False
        self._previous: list[Any] = []

    def __enter__(self) -> StopFlag:
        self._previous = [signal.signal(number, self._set) for number in self.SIGNALS]
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in zip(self.SIGNALS, self._previous, strict=True):
            signal.signal(number, handler)

    def _set(self, signum: int, frame: Any) -> None:
        self.stop = True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("training/data"))
    parser.add_argument("--checkpoints", type=Path, default=Path("training/checkpoints"))
    parser.add_argument("--log", type=Path, default=Path("training/runs/train.log"))
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=32.0)
    parser.add_argument("--targets", choices=("all", "attn"), default="all")
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=1_000_000)
    parser.add_argument(
        "--decay-from",
        type=int,
        default=None,
        help="decay lr linearly from this step to a tenth of it at --max-steps",
    )
    parser.add_argument("--limit", type=int, default=None, help="train on the first N examples")
    parser.add_argument("--max-tokens", type=int, default=None, help="skip longer examples")
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--eval-examples", type=int, default=32)
    parser.add_argument("--checkpoint-minutes", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--precision",
        choices=precision.PRECISIONS,
        default="auto",
        help="auto: time a small step in each and train in the faster",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-commit", action="store_true", help="do not git-commit checkpoints")
    parser.add_argument("--no-optimizer", action="store_true", help="keep Adam state out")
    return parser.parse_args(argv)


def learning_rate(args: argparse.Namespace, step: int) -> float:
    """Warm up, hold, then (when asked) decay linearly to a tenth at the last step.

    A function of the step alone, so a resumed run follows the same schedule."""
    lr = float(args.lr) * min(1.0, (step + 1) / args.warmup)
    if args.decay_from is None or step < args.decay_from:
        return lr
    span = max(1, args.max_steps - args.decay_from)
    return lr * (1.0 - 0.9 * min(1.0, (step - args.decay_from) / span))


def shorter(examples: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    if limit is None:
        return examples
    return [e for e in examples if len(e["prompt_ids"]) + len(e["answer_ids"]) <= limit]


def answer_loss(
    model: Any, examples: list[dict[str, Any]], batch_size: int, precision_name: str = "bf16"
) -> float:
    """Mean loss per answer token over `examples` (no gradients)."""
    import torch

    total = tokens = 0.0
    with torch.no_grad(), precision.autocast(precision_name):
        for start in range(0, len(examples), batch_size):
            batch = collate(examples[start : start + batch_size])
            count = int((batch["labels"][:, 1:] != -100).sum())
            total += float(model(**batch).loss) * count
            tokens += count
    return total / max(tokens, 1.0)


class Trainer:
    def __init__(self, args: argparse.Namespace) -> None:
        import torch

        torch.set_num_threads(args.threads)
        torch.manual_seed(args.seed)
        self.args = args
        self.shape = AdapterShape(args.rank, args.alpha, args.targets)
        examples = shorter(read_examples(args.data / "train.jsonl"), args.max_tokens)
        examples = examples[: args.limit]
        held = read_examples(args.data / "heldback.jsonl")
        if args.max_tokens is not None:  # the shortest, so that there always are some
            held.sort(key=lambda e: len(e["prompt_ids"]) + len(e["answer_ids"]))
        self.held = held[: args.eval_examples]
        self.schedule = BatchSchedule(examples, args.batch_size, args.seed)
        self.model = attach(load_model(), self.shape)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.params = params
        self.optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
        self.step = 0
        self.log = args.log
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.precision, timings = precision.choose(self.model, args.precision)
        self.write({"event": "precision", "precision": self.precision, "probe_s": timings})

    def write(self, row: dict[str, Any]) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")

    def resume(self) -> None:
        saved = checkpoint.load(self.args.checkpoints)
        if saved is None:
            return
        if saved["shape"] != self.shape.as_dict():
            raise SystemExit(f"checkpoint is for {saved['shape']}, not {self.shape.as_dict()}")
        load_adapter_state(self.model, saved["adapter"])
        if saved.get("optimizer") is not None:
            self.optimizer.load_state_dict(saved["optimizer"])
        self.step = saved["step"]
        self.write({"event": "resumed", "step": self.step, "time": time.time()})

    def save(self) -> None:
        state = None if self.args.no_optimizer else self.optimizer.state_dict()
        payload = {
            "step": self.step,
            "shape": self.shape.as_dict(),
            "adapter": adapter_state(self.model),
            "optimizer": None if state is None else checkpoint.shrink_optimizer(state),
            "args": {k: str(v) for k, v in vars(self.args).items()},
        }
        path = checkpoint.save(self.args.checkpoints, payload)
        self.write({"event": "checkpoint", "step": self.step, "bytes": path.stat().st_size})
        if not self.args.no_commit:
            checkpoint.commit(path, f"training: checkpoint at step {self.step}", (self.log,))

    def train_step(self) -> dict[str, Any]:
        import torch

        started = time.monotonic()
        batch = collate(self.schedule.batch(self.step))
        lr = learning_rate(self.args, self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        with precision.autocast(self.precision):
            loss = self.model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        seconds = time.monotonic() - started
        tokens = int(batch["attention_mask"].sum())
        return {
            "step": self.step,
            "loss": round(float(loss.detach()), 4),
            "lr": lr,
            "tokens": tokens,
            "tok_s": round(tokens / seconds, 1),
        }

    def evaluate(self) -> None:
        if not self.held:
            return
        self.model.eval()
        loss = answer_loss(self.model, self.held, self.args.batch_size, self.precision)
        self.model.train()
        self.write({"step": self.step, "eval_loss": round(loss, 4), "time": time.time()})

    def run(self) -> None:
        with StopFlag() as stop:
            self._run(stop)

    def _run(self, stop: StopFlag) -> None:
        self.resume()
        if self.step == 0:
            self.evaluate()
        last_save = time.monotonic()
        self.model.train()
        while self.step < self.args.max_steps and not stop.stop:
            row = self.train_step()
            if not math.isfinite(row["loss"]):
                raise SystemExit(f"loss is {row['loss']} at step {self.step}")
            self.write(row)
            if self.step % self.args.eval_every == 0:
                self.evaluate()
            if time.monotonic() - last_save > self.args.checkpoint_minutes * 60:
                self.save()
                last_save = time.monotonic()
        self.save()


def main(argv: list[str] | None = None) -> None:
    Trainer(parse_args(argv)).run()


if __name__ == "__main__":
    main()
