"""jedi in the name check's process (jedi_names.py), without importing what it inspects.

jedi reads Python modules as source (parso), but a compiled extension it can only know by
importing it, in the process of its environment. In-process (the name check's choice:
jedi's default environment answers every question through a subprocess of its own), that
import runs in the name check's process: `packer.` after `import msgpack._cmsgpack as
packer` imported it there, and an extension's import runs its package's own code (torch's
`_C` takes seconds and hundreds of megabytes). jedi imports extensions only from its
environment's sys.path (`Project(load_unsafe_extensions=False)`, its default), so the
environment here lists the standard library's folders only: `math` or `_socket` are
still known, site-packages' extensions are not (their names pass unchecked: unknown is
not wrong). The project keeps the whole search path, so Python sources and stubs there
are still read as before."""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import jedi

# Installed packages' folders, wherever they sit (a venv's, the base interpreter's seen
# through --system-site-packages, Debian's dist-packages): never the standard library.
INSTALLED_FOLDER_NAMES = frozenset({"site-packages", "dist-packages"})


def _in_standard_library(path: str, folders: set[Path]) -> bool:
    resolved = Path(path).resolve()
    if INSTALLED_FOLDER_NAMES.intersection(resolved.parts):
        return False
    return any(resolved == folder or folder in resolved.parents for folder in folders)


def standard_library_path() -> list[str]:
    """The entries of sys.path inside the standard library, installed packages excepted."""
    paths = sysconfig.get_paths()
    stdlib = {Path(paths[key]).resolve() for key in ("stdlib", "platstdlib")}
    return [p for p in sys.path if p and _in_standard_library(p, stdlib)]


def search_path() -> list[str]:
    """Where jedi finds modules to read: sys.path as jedi's default takes it (no '')."""
    return [p for p in sys.path if p]


class StandardLibraryExtensions(jedi.InterpreterEnvironment):
    """This interpreter, whose sys.path (for jedi: where it may import compiled modules
    from) is the standard library's."""

    def get_sys_path(self) -> list[str]:
        return standard_library_path()


def project(root: str) -> jedi.Project:
    """A project at `root` that reads modules from the whole search path."""
    return jedi.Project(root, sys_path=search_path())
