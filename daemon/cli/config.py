"""`shadowtab config`: the configuration in effect here, or (--reference) every setting
as the Markdown reference."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shadowtab.daemon.cli.exit_codes import EXIT_OK, EXIT_USAGE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "config",
        help="show the configuration in effect (or every setting: --reference)",
        description="Print the settings in effect for this directory, as JSON; with "
        "--reference, every setting (key, type, default, variable, meaning) as Markdown.",
    )
    parser.add_argument("--reference", action="store_true", help="print the reference")
    parser.set_defaults(func=run_config)


def run_config(args: argparse.Namespace) -> int:
    if args.reference:
        from shadowtab.daemon.config_reference import reference_markdown

        sys.stdout.write(reference_markdown())
        return EXIT_OK
    from shadowtab.daemon.config import ConfigError, load_settings

    try:
        settings = load_settings(Path.cwd())
    except ConfigError as exc:
        print(f"shadowtab: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(settings.describe(), indent=2))
    return EXIT_OK
