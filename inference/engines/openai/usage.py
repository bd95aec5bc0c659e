"""What OpenAI-compatible servers report about a request: prompt and completion tokens,
and how many prompt tokens their prefix cache served (vLLM and OpenAI:
usage.prompt_tokens_details.cached_tokens; llama.cpp's server: timings.cache_n)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..api import RequestStats


def cached_tokens(usage: dict[str, Any]) -> int | None:
    """Server-reported cached prompt tokens, or None when the server reports none."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        return int(details["cached_tokens"])
    timings = usage.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        return int(timings["cache_n"])
    if isinstance(usage.get("tokens_cached"), int):
        return int(usage["tokens_cached"])
    return None


def stats_from_usage(usage: dict[str, Any], chunks: int) -> RequestStats:
    """Request stats from the server's figures; without a usage report, the generated
    count is the number of streamed text chunks (one token each on the servers seen)."""
    stats = RequestStats()
    prompt = usage.get("prompt_tokens")
    if isinstance(prompt, int):
        stats.prompt_tokens = prompt
    generated = usage.get("completion_tokens")
    stats.generated_tokens = generated if isinstance(generated, int) else chunks
    cached = cached_tokens(usage) or 0
    stats.reused_prompt_tokens = cached
    stats.evaluated_prompt_tokens = max(0, stats.prompt_tokens - cached)
    return stats


@dataclass
class UsageTotals:
    requests: int = 0
    usage_reports: int = 0  # requests whose answer carried a usage block
    cache_reports: int = 0  # requests whose usage said how many prompt tokens were cached
    prompt_tokens: int = 0
    server_cached_tokens: int = 0
    generated_tokens: int = 0

    def add(self, stats: RequestStats, usage: dict[str, Any]) -> None:
        self.requests += 1
        self.usage_reports += bool(usage)
        self.cache_reports += cached_tokens(usage) is not None
        self.prompt_tokens += stats.prompt_tokens
        self.server_cached_tokens += stats.reused_prompt_tokens
        self.generated_tokens += stats.generated_tokens

    def cached_share(self) -> float | None:
        if not self.cache_reports or not self.prompt_tokens:
            return None
        return self.server_cached_tokens / self.prompt_tokens

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cached_share": self.cached_share()}
