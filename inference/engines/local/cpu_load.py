"""Threads for llama.cpp: one per physical core (hyperthreads share a core's vector units
and slow its barrier-synchronized kernels), and fewer while other processes keep cores
busy. llama.cpp's threads meet at a barrier after every operation, so a thread that
the OS deschedules stalls all the others: on a busy machine fewer threads than cores
decode and prefill faster than one per core."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
PROC_STAT = Path("/proc/stat")
MIN_INTERVAL_S = 0.25  # a shorter look-back is noise; keep the last choice meanwhile
# Niced processes (a training run) yield most of a core to ours: CFS weighs nice 5 at
# about a third of nice 0.
NICE_WEIGHT = 1 / 3


def logical_cpus() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return set(range(os.cpu_count() or 1))


def physical_cores(cpuinfo: str | None = None, allowed: set[int] | None = None) -> int:
    """Distinct (package, core) pairs among the CPUs this process may run on; the
    logical CPU count where /proc/cpuinfo does not say."""
    allowed = logical_cpus() if allowed is None else allowed
    try:
        text = CPUINFO.read_text() if cpuinfo is None else cpuinfo
    except OSError:
        return max(1, len(allowed))
    cores: set[tuple[str, str]] = set()
    for block in text.split("\n\n"):
        fields = dict(_field(line) for line in block.splitlines() if ":" in line)
        if "processor" not in fields or "core id" not in fields:
            continue
        if int(fields["processor"]) in allowed:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return max(1, len(cores) or len(allowed))


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip()


def threads_for(cores: int, others_busy: float) -> int:
    """Leave the cores other processes use: 2 cores, others busy 0.6 -> 1 thread."""
    return max(1, min(cores, int(cores - others_busy + 0.5)))


@dataclass(frozen=True)
class CpuTimes:
    wall: float
    busy_all: float  # seconds of CPU time every process used, all CPUs together
    busy_self: float  # of them, this process's


def read_times(nice_weight: float = NICE_WEIGHT) -> CpuTimes | None:
    """None where /proc/stat is missing (not Linux): then no adaptation. Niced time
    counts `nice_weight` (1.0: every other process's time, as a timing must)."""
    try:
        first = PROC_STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    values = [int(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal
    values += [0] * (8 - len(values))
    user, nice, system, _, _, irq, softirq, steal = values
    busy = (user + nice * nice_weight + system + irq + softirq + steal) / ticks
    own = os.times()
    return CpuTimes(time.monotonic(), busy, own.user + own.system)


def others_busy(before: CpuTimes, after: CpuTimes) -> float:
    """Cores other processes kept busy between two readings."""
    wall = after.wall - before.wall
    if wall <= 0:
        return 0.0
    others = (after.busy_all - before.busy_all) - (after.busy_self - before.busy_self)
    return max(0.0, others / wall)


class ThreadChooser:
    """The thread count for the next request: `cores` unless other processes kept cores
    busy since the last look (fixed when the user set the threads)."""

    def __init__(
        self,
        cores: int,
        adaptive: bool = True,
        clock: Callable[[], CpuTimes | None] = read_times,
    ) -> None:
        self.cores = cores
        self.adaptive = adaptive
        self._clock = clock
        self._last = clock() if adaptive else None
        self.current = cores
        self.others_busy = 0.0

    def choose(self) -> int:
        if not self.adaptive:
            return self.cores
        now = self._clock()
        if now is None or self._last is None:
            return self.current
        if now.wall - self._last.wall < MIN_INTERVAL_S:
            return self.current
        self.others_busy = others_busy(self._last, now)
        self._last = now
        self.current = threads_for(self.cores, self.others_busy)
        return self.current
