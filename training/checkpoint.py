"""Checkpoints of a training run: adapter weights, step, optimizer state, in one file
that is overwritten each time and committed to git (a run may span sessions; a
checkpoint that is not in the repository is lost when the machine goes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

LATEST = "adapter-latest.pt"


def save(folder: Path, payload: dict[str, Any]) -> Path:
    """Write atomically: a run killed mid-write leaves the previous checkpoint."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LATEST
    temp = path.with_suffix(".tmp")
    torch.save(payload, temp)
    os.replace(temp, path)
    return path


def load(folder: Path) -> dict[str, Any] | None:
    import torch

    path = folder / LATEST
    if not path.exists():
        return None
    payload: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=False)
    return payload


def shrink_optimizer(state: dict[str, Any]) -> dict[str, Any]:
    """Adam moments in bf16: half the bytes, close enough to resume from."""
    import torch

    out = {"param_groups": state["param_groups"], "state": {}}
    for key, moments in state["state"].items():
        out["state"][key] = {
            name: value.to(torch.bfloat16) if value.is_floating_point() and value.dim() else value
            for name, value in moments.items()
        }
    return out


def commit(path: Path, message: str, extra: tuple[Path, ...] = ()) -> None:
    """Commit just this file (and `extra` files, force-added: the run's log lives in an
    ignored folder); skipped (never fatal) while a rebase or another git
    command holds the repository, the next checkpoint commits instead."""
    cwd = path.parent
    try:
        git_dir = Path(
            subprocess.run(
                ["git", "rev-parse", "--absolute-git-dir"],
                cwd=cwd,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        if any(
            (git_dir / name).exists()
            for name in ("rebase-merge", "rebase-apply", "index.lock", "MERGE_HEAD")
        ):
            print(f"checkpoint commit skipped: git busy in {git_dir}", file=sys.stderr)
            return
        names = [str(path.resolve()), *(str(p.resolve()) for p in extra)]
        subprocess.run(["git", "add", "-f", "--", *names], cwd=cwd, check=True, capture_output=True)
        subprocess.run(
            ["git", "commit", "-q", "-m", message, "--", *names],
            cwd=cwd,
            check=True,
            capture_output=True,
        )
    except (subprocess.CalledProcessError, OSError) as error:
        print(f"checkpoint commit failed: {error}", file=sys.stderr)
