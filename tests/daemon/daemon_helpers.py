"""Shared helpers of the daemon tests (a uniquely named module: conftest is not
importable by name when several test folders have one)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shadowtab.daemon.runtime_files import RuntimeFiles, load_status_file


@dataclass
class DaemonEnv:
    base: Path
    workdir: Path  # the cwd of the test: a workspace with no shadowtab.toml
    files: RuntimeFiles
    seen_pids: set[int] = field(default_factory=set)

    def cli(
        self, *args: str, timeout: float = 60, **kwargs: Any
    ) -> subprocess.CompletedProcess[str]:
        """Run `shadowtab ARGS` in a child process, from the workdir."""
        completed = subprocess.run(
            [sys.executable, "-m", "shadowtab.daemon.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=kwargs.pop("cwd", self.workdir),
            **kwargs,
        )
        self.remember_pid()
        return completed

    def remember_pid(self) -> None:
        status = load_status_file(self.files.status_file)
        if status is not None:
            self.seen_pids.add(status["pid"])
