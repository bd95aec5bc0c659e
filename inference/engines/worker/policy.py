"""How the daemon supervises its engine worker: restart delays, when to give up, and
the deadlines after which a silent or stuck worker is killed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkerPolicy:
    restart_delay_s: float = 0.25  # after a crash of a worker that had loaded
    max_restart_delay_s: float = 8.0  # the delay doubles with each crash during a load
    max_load_crashes: int = 3  # in a row, before the model ever became ready: give up
    beat_s: float = 0.5  # how often the worker says it is alive
    silence_deadline_s: float = 15.0  # no frame at all for this long: stopped or hung
    # The same while the model loads: a starved machine (the load competes with other
    # work, maybe at a lower priority) must not turn a slow load into three "crashes"
    # and a worker given up on.
    load_silence_deadline_s: float = 120.0
    stall_deadline_s: float = 120.0  # a generation reached no forward pass for this long
    load_deadline_s: float = 900.0  # the model did not load in this time (torch: minutes)
    close_grace_s: float = 3.0  # after "close", before the worker is killed

    def restart_delay(self, load_crashes: int) -> float:
        """Crashes of a loaded worker restart at once (the model loads in seconds);
        crashes during loads back off exponentially."""
        return min(self.max_restart_delay_s, self.restart_delay_s * 2**load_crashes)
