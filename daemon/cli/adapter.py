"""`shadowtab adapter export-peft DIR`: the packaged next-edit LoRA adapter (a GGUF file
for llama.cpp) written as a peft directory, for servers that load peft adapters (vLLM's
`--lora-modules`). Needs the torch extra (gguf, peft, safetensors)."""

from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK


def register(subparsers: Any) -> None:
    adapter = subparsers.add_parser(
        "adapter",
        help="the next-edit LoRA adapter: write it for other servers",
        description=__doc__,
        epilog=EPILOG,
    )
    actions = adapter.add_subparsers(dest="adapter_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export-peft",
        help="write the adapter as a peft directory (adapter_config.json + safetensors)",
        description="Write a GGUF LoRA adapter (default: the packaged one) as a peft "
        "directory: vllm serve BASE --enable-lora --lora-modules next-edit=DIR.",
    )
    export.add_argument("dir", type=Path, help="the peft directory to write")
    export.add_argument("--adapter", type=Path, help="a GGUF LoRA file (default: the packaged)")
    export.add_argument(
        "--base", type=Path, help="its base model, GGUF or HF directory (default: the packaged)"
    )
    export.set_defaults(func=_export_peft)


def _export_peft(args: argparse.Namespace) -> int:
    missing = [name for name in ("gguf", "peft", "safetensors") if find_spec(name) is None]
    if missing:
        print(
            f"shadowtab adapter export-peft needs the torch extra (pip install "
            f"'shadowtab[torch]'): {', '.join(missing)} not installed",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    from shadowtab.inference import EngineError
    from shadowtab.inference.engines.torch.peft_export import export_peft

    try:
        written = export_peft(args.dir, args.adapter, args.base)
    except EngineError as exc:  # the adapter or the base: the message names which
        print(f"shadowtab adapter export-peft: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    print(written)
    return EXIT_OK
