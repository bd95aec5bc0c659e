"""The typing trace of the daemon tortures, without a daemon: a trace never
types or deletes a newline, replaying it gives the expressions it meant to type
(UTF-16 columns, astral characters too), and the reference of a shared file takes each
client's lines from its own replay."""

from __future__ import annotations

import random

import typing_trace
from typing_trace import TraceWriter, expected_text, owned_line, replay, source, trace


def test_the_owned_lines_are_where_the_source_says() -> None:
    text, owned = source("t", [3, 4], 2)
    lines = text.split("\n")
    assert [lines[n] for n in owned[3]] == ["    r3_0 = 0", "    r3_1 = 0"]
    assert [lines[n] for n in owned[4]] == ["    r4_0 = 0", "    r4_1 = 0"]
    compile(text, "t.py", "exec")  # a Python file before anyone types


def test_replaying_a_trace_types_what_the_writer_meant() -> None:
    text, owned = source("t", [0, 1], 3)
    for seed in range(30):
        writer = TraceWriter(1, owned[1], random.Random(seed))
        for slot in range(10):
            writer.retype(slot % 3)
        lines = replay(text, writer.keys).split("\n")
        for index, number in enumerate(owned[1]):
            assert lines[number] == owned_line(1, index) + writer.content[number]
    assert any("𝜋" in s for s in typing_trace.SNIPPETS)  # two UTF-16 units a character


def test_no_keystroke_moves_another_clients_lines() -> None:
    _, owned = source("t", [0, 1], 3)
    keys = trace(0, owned[0], 2000, seed=5)
    assert len(keys) == 2000 and keys[-1].burst_end
    assert all("\n" not in k.text and k.line in owned[0] for k in keys)
    assert {k.start == k.end for k in keys} == {True, False}  # inserts and deletions


def test_the_reference_takes_each_clients_lines_from_its_replay() -> None:
    text, owned = source("t", [0, 1], 2)
    keys = {c: trace(c, owned[c], 300, seed=2) for c in (0, 1)}
    both = replay(replay(text, keys[0]), keys[1])  # one interleaving: all of 0, then 1
    replays = {c: replay(text, keys[c]) for c in (0, 1)}
    assert expected_text(text, owned, replays) == both
    assert both != text
