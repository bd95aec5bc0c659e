"""Threads for llama.cpp: physical cores from /proc/cpuinfo (hyperthreads do not count),
and fewer threads while other processes keep cores busy (no model needed)."""

from __future__ import annotations

import time

from shadowtab.inference.engines.local.cpu_load import (
    CpuTimes,
    ThreadChooser,
    physical_cores,
    read_times,
    threads_for,
)


def cpuinfo(pairs: list[tuple[int, int]]) -> str:
    """/proc/cpuinfo blocks: processor i on (physical id, core id) pairs[i]."""
    return "\n\n".join(
        f"processor\t: {i}\nphysical id\t: {package}\ncore id\t\t: {core}\nflags\t\t: avx2"
        for i, (package, core) in enumerate(pairs)
    )


def test_hyperthreads_are_not_cores() -> None:
    two_cores_four_threads = cpuinfo([(0, 0), (0, 1), (0, 0), (0, 1)])
    assert physical_cores(two_cores_four_threads, allowed={0, 1, 2, 3}) == 2
    two_packages = cpuinfo([(0, 0), (1, 0)])
    assert physical_cores(two_packages, allowed={0, 1}) == 2


def test_only_the_cpus_the_process_may_use_count() -> None:
    four_cores = cpuinfo([(0, 0), (0, 1), (0, 2), (0, 3)])
    assert physical_cores(four_cores, allowed={2, 3}) == 2


def test_without_core_ids_the_logical_count_is_used() -> None:
    assert physical_cores("processor\t: 0\n\nprocessor\t: 1", allowed={0, 1, 2}) == 3


def test_threads_leave_the_cores_others_use() -> None:
    assert threads_for(2, 0.0) == 2
    assert threads_for(2, 0.4) == 2
    assert threads_for(2, 0.6) == 1
    assert threads_for(2, 5.0) == 1
    assert threads_for(8, 2.0) == 6


class FakeTimes:
    def __init__(self) -> None:
        self.now = CpuTimes(0.0, 0.0, 0.0)

    def advance(self, wall: float, others: float, own: float) -> None:
        n = self.now
        self.now = CpuTimes(n.wall + wall, n.busy_all + others + own, n.busy_self + own)

    def __call__(self) -> CpuTimes:
        return self.now


def test_the_chooser_backs_off_while_others_are_busy_and_comes_back() -> None:
    clock = FakeTimes()
    chooser = ThreadChooser(2, clock=clock)
    clock.advance(wall=1.0, others=0.1, own=1.9)  # our own request used both cores
    assert chooser.choose() == 2
    clock.advance(wall=1.0, others=1.5, own=0.5)
    assert chooser.choose() == 1
    assert chooser.others_busy == 1.5
    clock.advance(wall=0.1, others=0.0, own=0.0)  # too short a look-back: keep the choice
    assert chooser.choose() == 1
    clock.advance(wall=2.0, others=0.2, own=0.0)
    assert chooser.choose() == 2


def test_set_threads_stay_as_set() -> None:
    clock = FakeTimes()
    chooser = ThreadChooser(2, adaptive=False, clock=clock)
    clock.advance(wall=1.0, others=2.0, own=0.0)
    assert chooser.choose() == 2


def test_the_real_counters_see_this_process_work() -> None:
    before = read_times()
    assert before is not None  # Linux
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    after = read_times()
    assert after is not None
    assert after.busy_self - before.busy_self >= 0.25
    assert after.busy_all - before.busy_all >= after.busy_self - before.busy_self - 0.05
