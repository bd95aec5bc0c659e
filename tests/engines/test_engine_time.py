"""The engine's time by kind of call, with what stopped calls spent apart (engine_time.py)."""

from __future__ import annotations

from shadowtab.inference.engines.api import RequestStats
from shadowtab.inference.engines.local.engine_time import EngineTime


def test_stopped_calls_count_in_the_totals_and_apart() -> None:
    time = EngineTime()
    time.add(
        "complete", RequestStats(evaluated_prompt_tokens=5, forward_passes=3, seconds=0.3), True
    )
    time.add(
        "complete", RequestStats(evaluated_prompt_tokens=2, forward_passes=1, seconds=0.1), False
    )
    spent = time.to_dict()["complete"]
    assert spent["calls"] == 2 and spent["stopped"] == 1
    assert spent["seconds"] == 0.4 and spent["stopped_seconds"] == 0.1
    assert spent["forward_passes"] == 4 and spent["stopped_forward_passes"] == 1
    assert spent["stopped_evaluated_prompt_tokens"] == 2
