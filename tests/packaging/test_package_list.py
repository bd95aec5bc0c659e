"""The wheel holds every package of the product: pyproject lists them by hand (the
top-level folders map onto `shadowtab.*`), so a new package folder left out of the list
installs without it (the editable checkout still imports it, so only a clean install
shows the gap)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_in_the_wheel() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {name: Path(folder) for name, folder in setuptools["package-dir"].items()}
    found = {
        ".".join((name, *init.parent.relative_to(ROOT / folder).parts))
        for name, folder in folders.items()
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert found - listed == set()
