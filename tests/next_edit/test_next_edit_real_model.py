"""The whole pipeline on the packaged model (no adapter: the generic format): whatever
the model says, what comes out is a valid edit of the text now that keeps what the
user just typed, and ghost text is offered at the cursor."""

from __future__ import annotations

from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest

OLD = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
# A comment half typed where the model's likeliest words go on (after "# square " its
# likeliest continuation ends the line, and only an improbable alternative wrote more).
TYPED = "    return w * h  # the area of the "
AT = OLD.index("    return")
TEXT = OLD[:AT] + TYPED + OLD[AT + len("    return w * h") :]
EVENTS = [Edit("a.py", 0.0, AT, "    return w * h", ""), Edit("a.py", 0.2, AT, "", TYPED)]


def test_next_edits_are_valid_and_never_undo_the_typing(engine: LlamaCppEngine) -> None:
    predictor = EnginePredictor(lambda: engine)
    request = PredictionRequest("a.py", "python", TEXT, AT + len(TYPED), EVENTS, 2)
    for candidate in predictor.next_edit(request):
        assert 0 <= candidate.start <= candidate.end <= len(TEXT)
        result = TEXT[: candidate.start] + candidate.new_text + TEXT[candidate.end :]
        assert TYPED.strip() in result
        assert candidate.kind in ("inline", "edit", "jump") and 0 <= candidate.confidence <= 1
    inline = predictor.inline(request)
    assert inline, "no ghost text at the cursor"
    assert all(c.text.strip() and c.source in ("model", "completion") for c in inline)
    counts = predictor.feedback.to_dict()
    assert sum(row["shown"] for row in counts.values()) >= len(inline)
