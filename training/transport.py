"""A checkpoint in pieces small enough to come back from a GPU machine (its $OUT
returns at most 8 files of 16 MiB, 64 MiB in all; a full checkpoint's int8 change is
107 MB, an r = 64 adapter 78 MB in float32), and back.

    python -m training.transport pack --checkpoint CK.pt --out $OUT/returned
    python -m training.transport unpack --parts DIR --out DIR/checkpoints/adapter-latest.pt

`pack` stores the change from the base in 4 bits, groups of 64 along a row with a
float16 scale each (~54 MiB for 106 M weights), in pieces of at most 15 MiB;
`unpack` turns them into an ordinary full-mode checkpoint (without Adam state) that
training resumes from and export_full exports. The 4-bit rounding (at most half of a
group's largest change / 7) is the price of the trip; say so where its model is shipped.
A LoRA checkpoint travels as bf16 adapter matrices (r = 64: 39 MB), unpacked to float32.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

GROUP = 64
LEVELS = 7.0  # int4: -8..7, symmetric use of -7..7
PIECE_BYTES = 15 * 1024 * 1024
PIECE_NAME = "checkpoint.part{:02d}"


def _pack_matrix(change: Any) -> dict[str, Any]:
    import torch

    rows, cols = change.shape
    padded = torch.nn.functional.pad(change, (0, (-cols) % GROUP)).reshape(rows, -1, GROUP)
    scale = (padded.abs().amax(dim=2, keepdim=True) / LEVELS).clamp_min(1e-12)
    q = (padded / scale).round().clamp(-8, 7).to(torch.int16) + 8  # 0..15
    flat = q.reshape(-1).to(torch.uint8)
    nibbles = flat[0::2] | (flat[1::2] << 4)
    return {"shape": (rows, cols), "nibbles": nibbles, "scale": scale.half()}


def _unpack_matrix(packed: dict[str, Any]) -> Any:
    import torch

    rows, cols = packed["shape"]
    nibbles = packed["nibbles"]
    flat = torch.stack((nibbles & 15, nibbles >> 4), dim=1).reshape(-1).to(torch.int16) - 8
    scale = packed["scale"].float()
    values = flat.reshape(rows, -1, GROUP).float() * scale
    return values.reshape(rows, -1)[:, :cols]


def change_of(delta: dict[str, Any]) -> dict[str, Any]:
    """A full checkpoint's delta (full.delta_state) as float32 changes."""
    return {
        name: saved[0].float() * saved[1] if isinstance(saved, tuple) else saved.float()
        for name, saved in delta.items()
    }


def pack(checkpoint_path: Path, out: Path) -> list[Path]:
    import torch

    saved = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    body = {
        key: value for key, value in saved.items() if key not in ("delta", "adapter", "optimizer")
    }
    if saved.get("mode", "lora") == "lora":
        body["adapter_bf16"] = {k: v.to(torch.bfloat16) for k, v in saved["adapter"].items()}
    else:
        body["packed"] = {
            name: _pack_matrix(change) if change.dim() == 2 else change
            for name, change in change_of(saved["delta"]).items()
        }
    buffer = io.BytesIO()
    torch.save(body, buffer)
    data = buffer.getvalue()
    out.mkdir(parents=True, exist_ok=True)
    pieces = []
    for number, start in enumerate(range(0, len(data), PIECE_BYTES)):
        piece = out / PIECE_NAME.format(number)
        piece.write_bytes(data[start : start + PIECE_BYTES])
        pieces.append(piece)
    return pieces


def unpack(parts: Path, out: Path) -> Path:
    import torch

    pieces = sorted(parts.glob(PIECE_NAME.format(0)[:-2] + "*"))
    if not pieces:
        raise SystemExit(f"no {PIECE_NAME.format(0)[:-2]}NN files in {parts}")
    body = torch.load(io.BytesIO(b"".join(p.read_bytes() for p in pieces)), weights_only=False)
    if "adapter_bf16" in body:
        adapter = {k: v.float() for k, v in body.pop("adapter_bf16").items()}
        return _save({**body, "adapter": adapter, "optimizer": None}, out)
    delta: dict[str, Any] = {}
    for name, value in body.pop("packed").items():
        change = _unpack_matrix(value) if isinstance(value, dict) else value
        if change.dim() < 2:
            delta[name] = change
            continue
        scale = change.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127.0
        delta[name] = ((change / scale).round().to(torch.int8), scale)
    return _save({**body, "delta": delta, "optimizer": None}, out)


def _save(payload: dict[str, Any], out: Path) -> Path:
    from training import checkpoint

    saved = checkpoint.save(out.parent, payload)
    if saved != out:
        saved.replace(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    packing = sub.add_parser("pack")
    packing.add_argument("--checkpoint", type=Path, required=True)
    packing.add_argument("--out", type=Path, required=True)
    unpacking = sub.add_parser("unpack")
    unpacking.add_argument("--parts", type=Path, required=True)
    unpacking.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.verb == "pack":
        for piece in pack(args.checkpoint, args.out):
            print(piece, piece.stat().st_size)
    else:
        print(unpack(args.parts, args.out))


if __name__ == "__main__":
    main()
