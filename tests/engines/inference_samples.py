"""Real code used as prompts by the inference tests and benchmarks."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FIB = 'def fibonacci(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n'
SORT = (
    "def insertion_sort(items: list[int]) -> list[int]:\n"
    '    """Sort items in place with insertion sort and return them."""\n'
)
CLASS = (
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n"
)
JS = "function debounce(fn, ms) {\n  let timer;\n  return function (...args) {\n"


def long_code(min_chars: int) -> str:
    """Real source text from this repository, repeated as needed."""
    text = (REPO / "daemon" / "cli" / "main.py").read_text()
    return (text * (min_chars // len(text) + 1))[:min_chars]
