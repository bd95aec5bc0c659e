"""Tokenizing through the server: OpenAI's API has no tokenize call, but the servers this
engine targets each have one (vLLM and llama.cpp: /tokenize at the server root;
llama-cpp-python: /extras/tokenize). The first that answers is remembered."""

from __future__ import annotations

from typing import Any

from ..api import EngineError
from .client import ServerClient, ServerError

ROUTES = ("tokenize", "extras/tokenize")


def server_root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def tokenize_remote(
    client: ServerClient, base_url: str, model: str, text: str, known: tuple[str, str] | None
) -> tuple[list[int], tuple[str, str]]:
    """(tokens, the route that worked). One body fits all three servers' field names."""
    body: dict[str, Any] = {"model": model, "prompt": text, "content": text, "input": text}
    body["add_special_tokens"] = False
    routes = [known] if known else [(server_root(base_url), route) for route in ROUTES]
    problems: list[str] = []
    for root, route in routes:
        try:
            answer: Any = client.post_json(f"{root}/{route}", body, None)
        except ServerError as exc:
            problems.append(str(exc))
            continue
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if isinstance(tokens, list) and all(isinstance(t, int) for t in tokens):
            return tokens, (root, route)
        problems.append(f"{root}/{route}: no token list in the answer")
    raise EngineError("the server cannot tokenize: " + "; ".join(problems))
