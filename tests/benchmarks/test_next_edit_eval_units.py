"""The next-edit evaluation's own logic, without the model: the correctness criterion,
the cases cut from commits, the held-back split, the sweep."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common.eval_dump import case_record, remaining_change
from benchmarks.common.eval_report import Observation, Suggestion, mode_lines, sweep_line
from training import corpus, eval_cases
from training.edit_scoring import Verdict, judge, judge_line
from training.split import is_held_back

BEFORE = "def f(a):\n    return a\n\n\nx = f(1)\ny = f(2)\n"
AFTER = "def f(a, scale):\n    return a * scale\n\n\nx = f(1, 3)\ny = f(2)\n"
RECORD = {
    "repo": "o/r",
    "commit": "c0ffee",
    "path": "m.py",
    "before": BEFORE,
    "after": AFTER,
    "hunks": [[1, 2, 1, 2], [5, 1, 5, 1]],
}


def test_a_step_toward_the_commit_is_correct_and_the_whole_edit_exact() -> None:
    current = "x = f(1)\n"
    target = "x = f(1, 3)\n"
    assert judge(current, "x = f(1, )\n", target, [target]) == Verdict(True, False, 2)
    assert judge(current, target, target, [target]) == Verdict(True, True, 3)  # ", 3"


def test_strict_asks_for_what_the_commit_writes_there() -> None:
    current = "f(a, )\n"
    done = "f(a, index_type, *old_index.args)\n"
    cursor = current.index(")")
    lenient = current[:cursor] + "old_index" + current[cursor:]  # letters in order only
    verdict = judge(current, lenient, done, [done], cursor + len("old_index"))
    assert verdict.correct and not verdict.strict
    start = current[:cursor] + "index_type" + current[cursor:]
    assert judge(current, start, done, [done], cursor + len("index_type")).strict
    assert not judge(current, start, done, [done]).strict  # where the change ends unknown
    wrong = current[:cursor] + "x" + current[cursor:]
    assert not judge(current, wrong, done, [done], cursor + 1).strict


def test_a_change_off_the_shortest_path_or_no_change_is_not_correct() -> None:
    current, target = "x = f(1)\n", "x = f(1, 3)\n"
    assert not judge(current, "x = f(1, 4)\n", target, [target]).correct
    assert not judge(current, "x = g(1)\n", target, [target]).correct
    assert not judge(current, current, target, [target]).correct  # closes nothing
    assert judge(current, "x = f(1, 4)\n", target, [target]).chars_saved == 0


def test_hunks_rebuild_the_commit() -> None:
    hunks = eval_cases.hunks_of(RECORD)
    assert eval_cases.apply_hunks(BEFORE, hunks) == AFTER
    insertion = {**RECORD, "before": "a\nb\n", "after": "a\nnew\nb\n", "hunks": [[1, 0, 2, 1]]}
    assert eval_cases.apply_hunks("a\nb\n", eval_cases.hunks_of(insertion)) == "a\nnew\nb\n"


def test_typing_case_deletes_the_old_stretch_and_types_part_of_the_new() -> None:
    case = eval_cases.typing_case(RECORD)
    assert case is not None
    text = case.opened
    for step in case.steps:
        text = text[: step.start] + step.new_text + text[step.end :]
    assert text == case.current
    typed = case.current[: case.cursor]
    assert typed.startswith("def f(a") and AFTER.startswith(typed)
    assert case.cursor < len("def f(a, scale):\n    return a * scale")
    assert case.exact_texts == ("def f(a, scale):\n    return a * scale\n\n\nx = f(1)\ny = f(2)\n",)


def test_next_hunk_case_has_the_first_hunk_done() -> None:
    case = eval_cases.next_hunk_case(RECORD)
    assert case is not None
    assert case.current.startswith("def f(a, scale):\n    return a * scale\n")
    assert case.current.endswith("x = f(1)\ny = f(2)\n")
    assert case.exact_texts == (AFTER,)
    assert eval_cases.next_hunk_case({**RECORD, "hunks": RECORD["hunks"][:1]}) is None


def test_held_back_split_is_the_stable_tenth_training_holds_back(tmp_path: Path) -> None:
    rows = [f'{{"repo": "o/r", "commit": "{i:040x}"}}' for i in range(500)]
    (tmp_path / "edits-train.jsonl").write_text("\n".join(rows[:300]) + "\n")
    (tmp_path / "edits-train2.jsonl").write_text("\n".join(rows[300:]) + "\n")
    held = corpus.records(tmp_path, "heldout")
    train = corpus.records(tmp_path, "train")
    assert 25 <= len(held) <= 75 and len(held) + len(train) == 500
    assert not {r["commit"] for r in held} & {r["commit"] for r in train}
    assert held == corpus.records(tmp_path, "heldout")
    assert all(map(is_held_back, held)) and not any(map(is_held_back, train))


def observation(*suggestions: tuple[bool, float | None]) -> Observation:
    return Observation(
        [
            Suggestion(Verdict(ok, False, 3 if ok else 0, ok), conf, None)
            for ok, conf in suggestions
        ],
        seconds=0.5,
        reuse=(100, 90),
    )


def test_lines_and_the_confidence_sweep() -> None:
    found = [observation((True, 0.9)), observation((False, 0.4)), observation()]
    (line,) = mode_lines("typing", {"next_edit": found}, {"model": "m"})
    assert (line["cases"], line["shown"], line["correct"]) == (3, 2, 1)
    assert (line["precision"], line["recall"], line["chars_saved"]) == (0.5, 0.333, 3)
    assert (line["strict"], line["strict_precision"]) == (1, 0.5)
    assert line["prompt_reuse"] == 0.9 and line["model"] == "m"
    sweep = sweep_line("typing", "next_edit", found, {})
    assert sweep is not None and sweep["threshold_for_precision_0.8"] == 0.45
    assert sweep_line("typing", "ghost_text", [observation((True, None))], {}) is None


def test_the_dump_names_the_stretch_still_to_change() -> None:
    assert remaining_change("a(x)\n", "a(x, y)\n") == {"at": 3, "old": "", "new": ", y"}
    assert remaining_change("same", "same") == {"at": 4, "old": "", "new": ""}
    assert remaining_change("abXcd", "abYYcd") == {"at": 2, "old": "X", "new": "YY"}


async def test_the_harness_scores_what_the_server_shows(tmp_path: Path) -> None:
    """Through the real server with a stand-in predictor that offers the case's own
    answer: ghost text and next edit are then correct and exact."""
    from shadowtab.inference.next_edit.candidates import Candidate
    from shadowtab.inference.next_edit.edits import TextEdit
    from shadowtab.inference.next_edit.predictor import FixedPredictor

    from benchmarks.common.eval_run import CaseRunner, Pauses, start_hub, variants

    case = eval_cases.typing_case(RECORD)
    assert case is not None
    done = case.exact_texts[0]
    rest_of_line = done[case.cursor : done.index("\n", case.cursor)]
    predictor = FixedPredictor(inline_texts=[rest_of_line])
    tail = 0
    while case.current[len(case.current) - 1 - tail] == done[len(done) - 1 - tail]:
        tail += 1
    line_start = case.current.rfind("\n", 0, case.cursor) + 1
    edit = TextEdit(line_start, len(case.current) - tail, done[line_start : len(done) - tail])
    predictor.edits = [Candidate((edit,), 1.0, "")]
    variant = variants(None, None, None, 1)[0]
    hub, client, _ = await start_hub(variant, tmp_path, tmp_path / "data", predictor)
    runner = CaseRunner(hub, client, tmp_path / "root", Pauses(0.05, 0.05, 0.0))
    try:
        observed = await runner.run(case)
    finally:
        await runner.close()
        await hub.close()
    assert observed["ghost_text"].suggestions[0].verdict.correct
    assert observed["next_edit"].suggestions[0].verdict.exact
    record = case_record(case, observed)
    (offered,) = record["sources"]["ghost_text"][:1]
    assert offered["text"] == rest_of_line and offered["at"] == 0 and offered["correct"]
    assert record["remaining"]["new"].startswith(rest_of_line)
    assert observed["ghost_text"].error is None and observed["next_edit"].error is None


def test_line_case_types_the_first_part_of_a_line_the_commit_wrote() -> None:
    case = eval_cases.line_case(RECORD)
    assert case is not None and case.mode == "line"
    text = case.opened
    assert "def f(a, scale):" not in text and text.startswith("\n    return a * scale")
    for step in case.steps:
        assert step.start == step.end and len(step.new_text) == 1  # one key a step
        text = text[: step.start] + step.new_text + text[step.end :]
    assert text == case.current and case.target == AFTER
    rest = eval_cases.line_rest(case)
    assert case.current[: case.cursor] + rest == "def f(a, scale):"
    assert rest and case.cursor > 0
    short = {**RECORD, "after": "x = 1\n", "hunks": [[1, 1, 1, 1]]}
    assert eval_cases.line_case(short) is None  # too little to type


def test_line_completion_is_correct_only_as_a_prefix_of_the_rest() -> None:
    rest, at = "scale):", 10
    assert judge_line(rest, at, at, at, "scale") == Verdict(True, False, 5, True)
    assert judge_line(rest, at, at, at, rest).exact
    assert not judge_line(rest, at, at, at, "scale, x").correct
    assert not judge_line(rest, at, at, at, "").correct  # nothing shown is not correct
    assert not judge_line(rest, at, at - 1, at, "scale").correct  # replaces a character
    assert not judge_line(rest, at, at, at, "scale):\n    pass").correct  # a second line


def test_line_mode_reports_the_share_of_characters_saved() -> None:
    right = Suggestion(Verdict(True, False, 6, True), None, None)
    wrong = Suggestion(Verdict(False, False, 0, False), None, None)
    found = [
        Observation([right], 0.2, None, remaining=20),
        Observation([wrong], 0.4, None, remaining=10),
        Observation([], 0.3, None, remaining=10),
    ]
    (line,) = mode_lines("line", {"ghost_text": found}, {})
    assert (line["shown"], line["correct"], line["precision"]) == (2, 1, 0.5)
    assert line["chars_saved_share"] == 0.15 and line["latency_p50_ms"] == 300.0
