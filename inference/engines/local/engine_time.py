"""What an engine's time went to, by kind of call (warm, complete, rewrite): `stats`'
time_by_kind, so that a slow answer under load can be told apart (prefills of cache
misses, cancelled calls, warming) without a profiler."""

from __future__ import annotations

from ..api import RequestStats


class EngineTime:
    """Per kind of call: calls, seconds computing, prompt tokens prefilled, tokens
    generated, forward passes, seconds to the first token, calls stopped before their
    end (cancelled, or a warm preempted), and of those figures what the stopped calls
    spent (`stopped_*`: work a cancel threw away). Updated inside the engine's gate."""

    def __init__(self) -> None:
        self._by_kind: dict[str, dict[str, float]] = {}

    def add(self, kind: str, stats: RequestStats, ended: bool) -> None:
        spent = self._by_kind.setdefault(kind, {})
        work = (
            ("seconds", stats.seconds),
            ("evaluated_prompt_tokens", stats.evaluated_prompt_tokens),
            ("generated_tokens", stats.generated_tokens),
            ("forward_passes", stats.forward_passes),
        )
        counted: list[tuple[str, float]] = [
            ("calls", 1),
            *work,
            ("first_token_seconds", stats.first_token_seconds),
            ("stopped", int(not ended)),
        ]
        if not ended:
            counted += [(f"stopped_{key}", value) for key, value in work]
        for key, value in counted:
            spent[key] = round(spent.get(key, 0) + value, 3)

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {kind: dict(spent) for kind, spent in self._by_kind.items()}
