"""A quick measured comparison of adapter shapes: the same batches, the same number of
steps, then the held-back answer loss; one JSON line per shape.

    python -m training.compare --data training/data --steps 6
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path
from typing import Any

from training import precision
from training.base_model import load_model
from training.batches import collate, read_examples
from training.lora import AdapterShape, attach
from training.train import answer_loss

SHAPES = (
    AdapterShape(8, 16.0, "all"),
    AdapterShape(16, 32.0, "all"),
    AdapterShape(16, 32.0, "attn"),
)


def short(examples: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Short examples only: the comparison must take minutes, not an hour."""
    return [e for e in examples if len(e["prompt_ids"]) + len(e["answer_ids"]) <= limit]


def measure(
    base: Any,
    shape: AdapterShape,
    batches: list[list[dict[str, Any]]],
    held: list[dict[str, Any]],
    lr: float,
    mode: str,
) -> dict[str, Any]:
    import torch

    model = attach(copy.deepcopy(base), shape)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    started = time.monotonic()
    losses = []
    model.train()
    for batch in batches:
        with precision.autocast(mode):
            loss = model(**collate(batch)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(round(float(loss.detach()), 4))
    seconds = time.monotonic() - started
    model.eval()
    return {
        **shape.as_dict(),
        "params": sum(p.numel() for p in params),
        "train_losses": losses,
        "eval_loss": round(answer_loss(model, held, 4, mode), 4),
        "train_s": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("training/data"))
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=360)
    parser.add_argument("--eval-examples", type=int, default=8)
    parser.add_argument("--lr", type=float, default=5e-4)
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    train = short(read_examples(args.data / "train.jsonl"), args.max_tokens)
    held = short(read_examples(args.data / "heldback.jsonl"), args.max_tokens)[: args.eval_examples]
    size = args.batch_size
    batches = [train[i * size : (i + 1) * size] for i in range(args.steps)]
    base = load_model()
    mode, timings = precision.choose(attach(copy.deepcopy(base), SHAPES[0]), "auto")
    print(json.dumps({"precision": mode, "probe_s": timings}), flush=True)
    base_row = {"shape": "base", "eval_loss": round(answer_loss(base, held, 4, mode), 4)}
    print(json.dumps(base_row), flush=True)
    for shape in SHAPES:
        torch.manual_seed(0)
        print(json.dumps(measure(base, shape, batches, held, args.lr, mode)), flush=True)


if __name__ == "__main__":
    main()
