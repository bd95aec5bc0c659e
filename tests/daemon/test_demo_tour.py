"""The demo's step 3 (daemon/cli/demo_tour.py) uses the model's next edit only when it
really fixes the typo; otherwise the scripted fix, which the tour then says it made on the
model's behalf."""

from __future__ import annotations

from shadowtab.daemon.cli.demo_tour import (
    FIXED_LINE,
    apply_to,
    model_fix,
    scripted_fix,
    typed_text,
)


def line_edit(line: int, text: str) -> dict[str, object]:
    """A next edit replacing a whole line, as the model's come."""
    end = {"line": line + 1, "character": 0}
    return {"range": {"start": {"line": line, "character": 0}, "end": end}, "text": text}


def test_the_scripted_fix_fixes_the_typo() -> None:
    fixed = apply_to(typed_text(), scripted_fix())
    assert "nme" not in fixed and FIXED_LINE in fixed.split("\n")
    assert model_fix([scripted_fix()]) is not None


def test_a_suggestion_that_fixes_the_typo_is_the_models() -> None:
    other = line_edit(4, "def greet(person):\n")
    fix = line_edit(9, FIXED_LINE + "\n")
    assert model_fix([other, fix]) is fix


def test_suggestions_that_do_not_fix_it_leave_the_fix_to_the_tour() -> None:
    assert model_fix([]) is None
    assert model_fix([line_edit(9, '    print("Goodbye, " + nme + "!")\n')]) is None
    assert model_fix([line_edit(9, '    print("Goodbye, " + user)\n')]) is None
