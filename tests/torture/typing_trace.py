"""Typing traces for the daemon tortures (torture_clients.py, torture_soak.py): a
seeded stream of LSP keystrokes on the lines a client owns in a Python file (each
line `    r<client>_<j> = <expression>`), as a person types: an expression typed key by
key with typos corrected, the old one deleted with backspace or selected and typed
over, a word completed at once now and then, bursts of keys, short pauses between them
and now and then a longer one (thinking: long enough for ghost text to show).

No keystroke types or deletes a newline: a client's keystrokes never move the lines or
columns of another client's, so each client's trace replayed alone on the file gives
its own lines' final text whatever the interleaving with the others (the reference).
Positions are LSP's UTF-16 code units (the snippets hold é, ≈ and the astral 𝜋)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

SNIPPETS = [
    "work(a=1, b=2) + 1",
    "[i * i for i in range(10) if i % 2]",
    '{"name": "é", "size": 3}',
    '"𝜋 ≈ " + str(3.14159)',
    "sorted(items, key=lambda t: t[1])",
    "work(len('naïve'), 7) * 2",
    "max(items or [0], default=None)",
    "tuple(x for x in items if x)",
]
KEY_GAP_S = (0.06, 0.16)  # between keys of a burst
PAUSE_S = (0.6, 1.8)  # between bursts
THINK_S = (5.0, 15.0)  # now and then a longer pause: time for ghost text to show
BURST_END_P = 1 / 8
THINK_P = 1 / 50
TYPO_P = 0.04
WORD_P = 0.03  # the rest of a word at once (a completion accepted)
SELECT_P = 0.15  # the old expression selected and typed over instead of backspaced


@dataclass
class Keystroke:
    line: int
    start: int  # UTF-16 columns on `line`
    end: int
    text: str
    pause_s: float = 0.0  # before the next keystroke
    burst_end: bool = False  # the person pauses after it
    uri: str = ""  # the document typed into; "" for a client's only one

    def change(self) -> dict[str, Any]:
        """The didChange content change (incremental)."""
        rng = {
            "start": {"line": self.line, "character": self.start},
            "end": {"line": self.line, "character": self.end},
        }
        return {"range": rng, "text": self.text}

    def cursor(self) -> dict[str, int]:
        return {"line": self.line, "character": self.start + units(self.text)}


def units(text: str) -> int:
    """Length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def offset_of(text: str, position: dict[str, int]) -> int:
    """The str offset of an LSP position (UTF-16 code units), clamped to its line and to
    the text. The reference the daemon's shadow is checked against: written here, not
    taken from the product (shadow_workspace's LineText), so that a bug there shows."""
    line_start = 0
    for _ in range(position["line"]):
        found = text.find("\n", line_start)
        if found == -1:
            return len(text)
        line_start = found + 1
    line_end = text.find("\n", line_start)
    line = text[line_start : len(text) if line_end == -1 else line_end]
    prefix = line.encode("utf-16-le")[: position["character"] * 2]
    return line_start + len(prefix.decode("utf-16-le", errors="ignore"))


def owned_line(client: int, index: int) -> str:
    return f"    r{client}_{index} = "


def source(
    title: str, clients: list[int], lines_per_client: int
) -> tuple[str, dict[int, list[int]]]:
    """A Python file with a function per client holding its lines; the text and each
    client's owned line numbers."""
    parts = [f'"""{title}"""\n\n\ndef work(a, b):\n    return a + b\n']
    owned: dict[int, list[int]] = {}
    line = 5  # the next line's number
    for client in clients:
        parts.append(f"\n\ndef client_{client}(items):\n")
        line += 3
        owned[client] = list(range(line, line + lines_per_client))
        parts.extend(owned_line(client, j) + "0\n" for j in range(lines_per_client))
        parts.append(f"    return r{client}_0\n")
        line += lines_per_client + 1
    return "".join(parts), owned


class TraceWriter:
    """Builds one client's keystrokes, keeping the text of its owned lines."""

    def __init__(self, client: int, lines: list[int], rng: random.Random) -> None:
        self.client, self.lines, self.rng = client, lines, rng
        self.content = {line: "0" for line in lines}  # after each line's prefix
        self.keys: list[Keystroke] = []

    def retype(self, slot: int) -> None:
        """Replace the expression on owned line `slot` with a new snippet."""
        line = self.lines[slot]
        column = units(owned_line(self.client, slot))
        old = self.content[line]
        new = self.rng.choice(SNIPPETS)
        typed = ""
        if old and self.rng.random() < SELECT_P:  # selected, typed over by its first key
            self._key(line, column, column + units(old), new[0])
            typed, old = new[0], ""
        while old:  # backspace, one character (one or two code units) at a time
            end = column + units(old)
            old = old[:-1]
            self._key(line, column + units(old), end, "")
        self._type(line, column, typed, new)
        self.keys[-1].burst_end = True  # the expression is done: a pause
        self.content[line] = new

    def _type(self, line: int, column: int, typed: str, new: str) -> None:
        while len(typed) < len(new):
            at = column + units(typed)
            if self.rng.random() < TYPO_P:
                self._key(line, at, at, self.rng.choice("qxz"))
                self._key(line, at, at + 1, "")
            rest = new[len(typed) :]
            word = rest.split(" ")[0]
            chunk = word if len(word) > 3 and self.rng.random() < WORD_P else rest[0]
            self._key(line, at, at, chunk)
            typed += chunk

    def _key(self, line: int, start: int, end: int, text: str) -> None:
        rng = self.rng
        chance = rng.random()
        burst_end = chance < BURST_END_P
        if chance < THINK_P:
            pause = rng.uniform(*THINK_S)
        else:
            pause = rng.uniform(*PAUSE_S) if burst_end else rng.uniform(*KEY_GAP_S)
        self.keys.append(Keystroke(line, start, end, text, pause, burst_end))


def trace(client: int, lines: list[int], count: int, seed: int) -> list[Keystroke]:
    """`count` keystrokes of `client` on its owned `lines`, seeded."""
    writer = TraceWriter(client, lines, random.Random(seed * 1000 + client))
    slot = 0
    while len(writer.keys) < count:
        writer.retype(slot % len(lines))
        slot += 1
    keys = writer.keys[:count]
    keys[-1].burst_end = True
    return keys


def interleave(traces: list[list[Keystroke]], switch_p: float, seed: int) -> list[Keystroke]:
    """The keystrokes of several files' traces as one person types them: a burst in one
    file, then, at a pause, now and then to another file. Each trace keeps its order, so
    each replayed alone on its file still gives that file's lines."""
    rng = random.Random(seed)
    keys: list[Keystroke] = []
    next_of = [0] * len(traces)
    current = 0
    while len(keys) < sum(map(len, traces)):
        if next_of[current] == len(traces[current]):  # this file's trace is done
            current = (current + 1) % len(traces)
            continue
        key = traces[current][next_of[current]]
        next_of[current] += 1
        keys.append(key)
        if key.burst_end and rng.random() < switch_p:
            current = (current + 1) % len(traces)
    return keys


class Buffer:
    """An editor's buffer of one document: its text and version."""

    def __init__(self, text: str, version: int = 1) -> None:
        self.text, self.version = text, version

    def apply(self, change: dict[str, Any]) -> None:
        """Apply one incremental content change ({range, text}) and count a version."""
        rng = change["range"]
        start, end = offset_of(self.text, rng["start"]), offset_of(self.text, rng["end"])
        self.text = self.text[:start] + change["text"] + self.text[end:]
        self.version += 1


def replay(text: str, keys: list[Keystroke]) -> str:
    """The text after `keys` alone (the reference of one client's lines)."""
    buffer = Buffer(text)
    for key in keys:
        buffer.apply(key.change())
    return buffer.text


def expected_text(text: str, owned: dict[int, list[int]], replays: dict[int, str]) -> str:
    """The file once every client typed its trace: each owned line from its client's
    replay, the other lines as they were."""
    lines = text.split("\n")
    for client, numbers in owned.items():
        replayed = replays[client].split("\n")
        for number in numbers:
            lines[number] = replayed[number]
    return "\n".join(lines)
