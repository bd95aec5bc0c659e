"""Training of the packaged model on mined examples, resumable: a LoRA adapter
(`--mode lora --rank R`) or all weights (`--mode full`, full.py), on the CPU (bf16
autocast or fp32, whichever a probe times faster) or a GPU (`--device cuda`, bf16).

    nohup nice -n 15 python -m training.train --data training/data \
        --checkpoints training/checkpoints --log training/runs/train.log &

Logs one JSON line per step (loss on the answer tokens) and a held-back evaluation
loss every --eval-every steps; writes (and, unless --no-commit, commits) a checkpoint
every --checkpoint-minutes and when stopped with SIGTERM/SIGINT; restarted with the same
command it resumes from the checkpoint folder's adapter-latest.pt. A checkpoint of
another mode, base or shape is refused before anything is written.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import time
from pathlib import Path
from typing import Any

from training import checkpoint, full, packed, precision
from training.base_model import BASES, PACKAGED, base_fingerprint, load_base
from training.batches import BatchSchedule, collate, read_examples
from training.lora import AdapterShape, adapter_state, attach, load_adapter_state

CHECKPOINT_LIMIT = 100_000_000  # bytes; Adam state is kept only where it fits under it


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
    parser.add_argument("--mode", choices=("lora", "full"), default="lora")
    parser.add_argument("--base", choices=BASES, default=PACKAGED)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    parser.add_argument(
        "--train-embeddings", action="store_true", help="full mode: the embedding trains too"
    )
    parser.add_argument("--epochs", type=float, default=None, help="sets --max-steps")
    parser.add_argument("--print-every", type=int, default=0, help="progress lines on stdout")
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
    parser.add_argument(
        "--decay", action="store_true", help="decay from the end of warm-up (--decay-from W)"
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


def learning_rate(args: argparse.Namespace, step: int, rewarm_from: int | None = None) -> float:
    """Warm up, hold, then (when asked) decay linearly to a tenth at the last step.

    A function of the step alone, so a resumed run follows the same schedule; a run
    resumed without Adam state (`rewarm_from`: its first step) warms up again, as
    fresh Adam moments make full-size first steps."""
    lr = float(args.lr) * min(1.0, (step + 1) / args.warmup)
    if rewarm_from is not None:
        lr *= min(1.0, (step - rewarm_from + 1) / args.warmup)
    if args.decay_from is None or step < args.decay_from:
        return lr
    span = max(1, args.max_steps - args.decay_from)
    return lr * (1.0 - 0.9 * min(1.0, (step - args.decay_from) / span))


def shorter(examples: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    if limit is None:
        return examples
    return [e for e in examples if len(e["prompt_ids"]) + len(e["answer_ids"]) <= limit]


def load_split(data: Path, name: str) -> list[dict[str, Any]]:
    """DATA/NAME.npz (packed.py) where it exists, else DATA/NAME.jsonl."""
    if (data / f"{name}.npz").exists():
        return packed.read(data / f"{name}.npz")
    return read_examples(data / f"{name}.jsonl")


def answer_loss(
    model: Any,
    examples: list[dict[str, Any]],
    batch_size: int,
    precision_name: str = "bf16",
    device: str = "cpu",
) -> float:
    """Mean loss per answer token over `examples` (no gradients)."""
    import torch

    total = tokens = 0.0
    with torch.no_grad(), precision.autocast(precision_name, device):
        for start in range(0, len(examples), batch_size):
            batch = to_device(collate(examples[start : start + batch_size]), device)
            count = int((batch["labels"][:, 1:] != -100).sum())
            total += float(model(**batch).loss) * count
            tokens += count
    return total / max(tokens, 1.0)


def to_device(batch: dict[str, Any], device: str) -> dict[str, Any]:
    if device == "cpu":
        return batch
    return {name: tensor.to(device, non_blocking=True) for name, tensor in batch.items()}


class Incompatible(SystemExit):
    """A checkpoint of another mode, base or shape: refused before anything is written."""


class Trainer:
    def __init__(self, args: argparse.Namespace) -> None:
        import torch

        torch.set_num_threads(args.threads)
        torch.manual_seed(args.seed)
        self.args = args
        self.device = args.device
        self.base = base_fingerprint(args.base)
        examples = shorter(load_split(args.data, "train"), args.max_tokens)
        examples = examples[: args.limit]
        held = load_split(args.data, "heldback")
        if args.max_tokens is not None:  # the shortest, so that there always are some
            held.sort(key=lambda e: len(e["prompt_ids"]) + len(e["answer_ids"]))
        self.held = held[: args.eval_examples]
        self.schedule = BatchSchedule(examples, args.batch_size, args.seed)
        if args.epochs is not None:
            args.max_steps = math.ceil(args.epochs * len(examples) / args.batch_size)
        if args.decay:
            args.decay_from = args.warmup
        self.model = load_base(args.base)
        if args.mode == "lora":
            self.model = attach(self.model, AdapterShape(args.rank, args.alpha, args.targets))
            self.params = [p for p in self.model.parameters() if p.requires_grad]
            self.base_weights: dict[str, Any] = {}
        else:
            self.params = full.mark_trainable(self.model, args.train_embeddings)
            self.base_weights = full.base_copy(self.model)
        self.model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.params, lr=args.lr, weight_decay=0.0)
        self.step = self.first_step = 0
        self.rewarm_from: int | None = None
        self.tokens_seen = 0
        self.log = args.log
        self.precision = "fp32"

    def shape(self) -> dict[str, Any]:
        """What a checkpoint must match besides its base and mode."""
        if self.args.mode == "lora":
            return AdapterShape(self.args.rank, self.args.alpha, self.args.targets).as_dict()
        return {
            "train_embeddings": bool(self.args.train_embeddings),
            "tensors": full.shapes(self.base_weights),
        }

    def write(self, row: dict[str, Any]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")

    def resume(self) -> None:
        """Continue from the folder's checkpoint; a checkpoint of another mode, base or
        shape stops the run (Incompatible) before anything is written."""
        saved = checkpoint.load(self.args.checkpoints)
        if saved is None:
            return
        found = {
            "mode": saved.get("mode", "lora"),  # older checkpoints: LoRA on the packaged base
            "base": saved.get("base", base_fingerprint(PACKAGED)),
            "shape": saved["shape"],
        }
        wanted = {"mode": self.args.mode, "base": self.base, "shape": self.shape()}
        for key in ("mode", "base", "shape"):
            if found[key] != wanted[key]:
                raise Incompatible(
                    f"checkpoint {self.args.checkpoints / checkpoint.LATEST} has {key} "
                    f"{_brief(found[key])}, this run {_brief(wanted[key])}: use another "
                    "--checkpoints folder or the flags it was trained with (nothing was written)"
                )
        try:
            if self.args.mode == "lora":
                load_adapter_state(self.model, saved["adapter"])
            else:
                full.load_delta(self.model, self.base_weights, saved["delta"])
        except ValueError as error:
            raise Incompatible(f"checkpoint does not fit this model: {error}") from error
        if saved.get("optimizer") is not None:
            self.optimizer.load_state_dict(saved["optimizer"])
        else:
            self.rewarm_from = saved["step"]
        self.step = saved["step"]
        self.write({"event": "resumed", "step": self.step, "time": time.time()})

    def _keeps_optimizer(self, weight_bytes: int) -> bool:
        """Adam state (two bf16 moments a weight) only where the file stays small."""
        count = sum(p.numel() for p in self.params)
        return not self.args.no_optimizer and weight_bytes + 4 * count <= CHECKPOINT_LIMIT

    def save(self) -> None:
        payload: dict[str, Any] = {
            "format": 2,
            "mode": self.args.mode,
            "base": self.base,
            "step": self.step,
            "shape": self.shape(),
            "args": {k: str(v) for k, v in vars(self.args).items()},
        }
        if self.args.mode == "lora":
            payload["adapter"] = {k: v.cpu() for k, v in adapter_state(self.model).items()}
            weight_bytes = 4 * sum(p.numel() for p in self.params)
        else:
            payload["delta"] = full.delta_state(self.model, self.base_weights)
            weight_bytes = sum(p.numel() for p in self.params)
        keep = self._keeps_optimizer(weight_bytes)
        state = self.optimizer.state_dict() if keep else None
        payload["optimizer"] = None if state is None else checkpoint.shrink_optimizer(state)
        path = checkpoint.save(self.args.checkpoints, payload)
        self.write({"event": "checkpoint", "step": self.step, "bytes": path.stat().st_size})
        if not self.args.no_commit:
            checkpoint.commit(path, f"training: checkpoint at step {self.step}", (self.log,))

    def train_step(self) -> dict[str, Any]:
        import torch

        started = time.monotonic()
        batch = to_device(collate(self.schedule.batch(self.step)), self.device)
        lr = learning_rate(self.args, self.step, self.rewarm_from)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        with precision.autocast(self.precision, self.device):
            loss = self.model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        tokens = int(batch["attention_mask"].sum())  # waits for the GPU: honest timing
        seconds = time.monotonic() - started
        self.tokens_seen += tokens
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
        loss = answer_loss(self.model, self.held, self.args.batch_size, self.precision, self.device)
        self.model.train()
        self.write({"step": self.step, "eval_loss": round(loss, 4), "time": time.time()})

    def run(self) -> None:
        with StopFlag() as stop:
            self._run(stop)

    def _start(self) -> None:
        """Resume (or refuse) first: a refused checkpoint leaves no trace, log included."""
        self.resume()
        timings: dict[str, float] = {}
        if self.device.startswith("cuda"):  # bf16 kernels on every recent GPU: no probe
            asked = self.args.precision
            self.precision = "bf16" if asked == "auto" else asked
        else:
            self.precision, timings = precision.choose(self.model, self.args.precision)
        self.write({"event": "precision", "precision": self.precision, "probe_s": timings})

    def _progress(self, row: dict[str, Any], started: float) -> None:
        every = self.args.print_every
        if not every or (self.step % every and self.step != self.args.max_steps):
            return
        seconds = time.monotonic() - started
        rate = self.tokens_seen / max(seconds, 1e-9)
        left = (self.args.max_steps - self.step) * seconds / max(self.step - self.first_step, 1)
        epoch = self.step / max(1, -(-len(self.schedule.examples) // self.args.batch_size))
        print(
            f"step {self.step}/{self.args.max_steps} epoch {epoch:.2f} loss {row['loss']:.4f}"
            f" lr {row['lr']:.2e} {rate:,.0f} tok/s, ~{left / 60:.1f} min left",
            flush=True,
        )

    def _run(self, stop: StopFlag) -> None:
        self._start()
        if self.step == 0:
            self.evaluate()
        last_save = started = time.monotonic()
        self.first_step = self.step
        self.model.train()
        while self.step < self.args.max_steps and not stop.stop:
            row = self.train_step()
            if not math.isfinite(row["loss"]):
                raise SystemExit(f"loss is {row['loss']} at step {self.step}")
            self.write(row)
            self._progress(row, started)
            if self.step % self.args.eval_every == 0:
                self.evaluate()
            if time.monotonic() - last_save > self.args.checkpoint_minutes * 60:
                self.save()
                last_save = time.monotonic()
        self.save()


def _brief(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def main(argv: list[str] | None = None) -> None:
    Trainer(parse_args(argv)).run()


if __name__ == "__main__":
    main()
