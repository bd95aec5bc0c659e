"""`shadowtab predict` runs the predictor the editors get (`engine_predictor`): with the
real packaged model, a parameter renamed at its definition and first use is offered at
its last use too, far below, by propagation (the model's window does not reach it). A
CLI that built a predictor of its own, without propagation, would offer nothing there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemon_helpers import DaemonEnv

FILLER = [f"    step_{i} = {i} * 2" for i in range(60)]
BEFORE = "\n".join(
    ["def greet(name):", '    print("hello", name)', *FILLER, "    return str(name)"]
)


def renamed_twice(text: str) -> tuple[str, list[dict[str, object]]]:
    """`name` -> `who` at the definition, then at the first use: the text after both
    edits, and the edits as `--history` events, one second apart."""
    events: list[dict[str, object]] = []
    for anchor in ("(name)", '"hello", name'):
        offset = text.index(anchor) + anchor.index("name")
        when = 1.0 + len(events)
        events.append({"offset": offset, "old_text": "name", "new_text": "who", "time": when})
        text = text[:offset] + "who" + text[offset + len("name") :]
    return text, events


def test_predict_offers_what_propagation_offers_the_editors(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "llama.cpp")
    monkeypatch.setenv("SHADOWTAB_ENGINE_WEIGHTS", "q8_0")  # not measured: not tested here
    text, events = renamed_twice(BEFORE)
    source = daemon_env.workdir / "greet.py"
    source.write_text(text)
    history = daemon_env.workdir / "history.json"
    history.write_text(json.dumps(events))
    line = 2
    column = len('    print("hello", who') + 1  # 1-based: the cursor after the new name
    done = daemon_env.cli(
        "predict",
        "--kind",
        "next-edit",
        "--history",
        str(history),
        "--json",
        f"{source.name}:{line}:{column}",
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    edits = json.loads(done.stdout)["next_edit"]
    last_use = text.rindex("name")
    assert {
        (e["source"], e["kind"], e["start"], e["new"])
        for e in edits
        if e["source"] == "propagation"
    } == {("propagation", "jump", last_use, "who")}, edits


def test_the_history_events_are_what_the_test_says() -> None:
    text, events = renamed_twice(BEFORE)
    assert text.startswith('def greet(who):\n    print("hello", who)\n')
    assert text.endswith("return str(name)") and text.count("name") == 1
    assert [e["offset"] for e in events] == [10, len('def greet(who):\n    print("hello", ')]


def test_predict_refuses_a_bad_pause(daemon_env: DaemonEnv, tmp_path: Path) -> None:
    done = daemon_env.cli("predict", "--pause", "soon", "x.py:1:1")
    assert done.returncode == 2 and "--pause" in done.stderr
