"""A benchmark run against the product code of two commits in one run, alternating, so
that both meet the same machine load. Prints the benchmark's JSON lines for each run,
with "code" ("before" or "after") and "rev" added.

    python -m benchmarks.side_by_side --before REV [--after REV] [--rounds 2] \
        -- next_edit_latency --ghost-alone --cases 16 --data-dir /tmp/st-data

The benchmark script is this checkout's, run with each commit's product packages (a
git worktree of the commit, imported as `shadowtab` through PYTHONPATH, which the
engine worker inherits). `--after` defaults to the working tree as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("daemon", "lsp", "shadow_workspace", "inference")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit to compare against")
    parser.add_argument("--after", default=None, help="default: the working tree")
    parser.add_argument("--rounds", type=int, default=1, help="before/after pairs")
    parser.add_argument("benchmark", nargs=argparse.REMAINDER, help="-- SCRIPT [ARGS]")
    args = parser.parse_args(argv)
    if args.benchmark and args.benchmark[0] == "--":
        args.benchmark = args.benchmark[1:]
    if not args.benchmark:
        parser.error("name the benchmark script after --")
    return args


def checkout(rev: str, into: Path) -> Path:
    """A detached worktree of `rev` at `into`."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(into), rev],
        check=True,
    )
    return into


def import_root(tree: Path, into: Path) -> Path:
    """A folder whose `shadowtab` package is `tree`'s components."""
    package = into / "shadowtab"
    package.mkdir(parents=True)
    for name in PACKAGES:
        (package / name).symlink_to(tree / name, target_is_directory=True)
    return into


def run(benchmark: list[str], path: Path) -> list[dict[str, object]]:
    module = f"benchmarks.{benchmark[0].removesuffix('.py')}"  # `next_edit_latency[.py]`
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(path), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-m", module, *benchmark[1:]],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{benchmark[0]} printed no JSON line")
    return lines


def rev_name(rev: str | None) -> str:
    if rev is None:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        return f"{head}+worktree"
    return rev


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="st-side-by-side-") as scratch:
        base = Path(scratch)
        trees = {"before": checkout(args.before, base / "before")}
        trees["after"] = checkout(args.after, base / "after") if args.after else ROOT
        paths = {code: import_root(tree, base / f"import-{code}") for code, tree in trees.items()}
        revs = {"before": args.before, "after": rev_name(args.after)}
        try:
            for _ in range(args.rounds):
                for code in ("before", "after"):
                    for line in run(args.benchmark, paths[code]):
                        print(json.dumps({"code": code, "rev": revs[code], **line}), flush=True)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(
                        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                        check=False,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
