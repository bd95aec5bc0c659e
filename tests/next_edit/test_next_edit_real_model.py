"""The whole pipeline on the packaged model (no adapter: the generic format): whatever
the model says, what comes out is a valid edit of the text now that keeps what the
user just typed, and ghost text is offered at the cursor."""

from __future__ import annotations

from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import (
    EnginePredictor,
    PredictionRequest,
    query_of,
)

OLD = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
# A comment half typed where the model's likeliest words go on (after "# square " its
# likeliest continuation ends the line, and only an improbable alternative wrote more).
TYPED = "    return w * h  # the area of the "
AT = OLD.index("    return")
TEXT = OLD[:AT] + TYPED + OLD[AT + len("    return w * h") :]
EVENTS = [Edit("a.py", 0.0, AT, "    return w * h", ""), Edit("a.py", 0.2, AT, "", TYPED)]


def test_next_edits_are_valid_and_never_undo_the_typing(engine: LlamaCppEngine) -> None:
    """Without the token cut (threshold 0, no gate) ghost text is offered; with it, only
    what the model is sure of (see test_ghost_text_is_only_what_the_model_is_sure_of)."""
    predictor = EnginePredictor(lambda: engine, token_threshold=0.0, ghost_gate=False)
    request = PredictionRequest("a.py", "python", TEXT, AT + len(TYPED), EVENTS, 2)
    for candidate in predictor.next_edit(request):
        edit = candidate.edit
        assert 0 <= edit.start <= edit.end <= len(TEXT)
        result = edit.apply(TEXT)
        assert TYPED.strip() in result
        assert candidate.kind in ("inline", "edit", "jump") and 0 <= candidate.confidence <= 1
    inline = predictor.inline(request)
    assert inline, "no ghost text at the cursor"
    assert all(c.edit.new_text.strip() and c.source in ("model", "completion") for c in inline)
    counts = predictor.feedback_counts()
    assert sum(row["shown"] for row in counts.values()) >= len(inline)


def test_ghost_text_is_only_what_the_model_is_sure_of(engine: LlamaCppEngine) -> None:
    """A line that repeats the two above it: the model is sure of the call, not of its
    new arguments. With the default threshold (the gate off: this is the rule every other
    model gets) the ghost text is the sure part alone, every token at least that likely,
    a prefix of the uncut continuation."""
    text = OLD + "print(area(4, 5))\nprint(\n"
    cursor = text.index("print(\n") + len("print(")
    events = [Edit("a.py", 0.0, cursor - len("print("), "", "print(")]
    request = PredictionRequest("a.py", "python", text, cursor, events, 1)
    sure = EnginePredictor(lambda: engine, ghost_gate=False)
    uncut = EnginePredictor(lambda: engine, token_threshold=0.0, ghost_gate=False)
    threshold = sure.model.token_threshold
    (ghost,) = sure.inline(request)
    (whole,) = uncut.inline(request)
    ghost_text, whole_text = ghost.edit.new_text, whole.edit.new_text
    assert ghost_text == "area(" and whole_text.startswith("area(") and len(whole_text) > 5
    (candidate,) = sure._continuations(query_of(request), None)
    assert candidate.token_probs is not None and min(candidate.token_probs) >= threshold


def test_the_gate_cuts_the_packaged_models_ghost_text(engine: LlamaCppEngine) -> None:
    """The packaged model with its adapter is what the shipped gate was fitted for: it
    chooses the cut, a prefix of the uncut continuation whose tokens are all at least
    as likely as the gate's decode floor, with the gate's probability as confidence."""
    text = OLD + "print(area(4, 5))\nprint(\n"
    cursor = text.index("print(\n") + len("print(")
    events = [Edit("a.py", 0.0, cursor - len("print("), "", "print(")]
    request = PredictionRequest("a.py", "python", text, cursor, events, 1)
    gated = EnginePredictor(lambda: engine)
    uncut = EnginePredictor(lambda: engine, token_threshold=0.0, ghost_gate=False)
    assert gated.ghost_gate_state.startswith("on"), gated.ghost_gate_state
    gate = gated._completion.gate(engine)
    assert gate is not None
    (whole,) = uncut.inline(request)
    (candidate,) = gated._continuations(query_of(request), None)
    assert whole.edit.new_text.startswith(candidate.edit.new_text)
    assert candidate.token_probs is not None
    assert min(candidate.token_probs) >= gate.decode_floor
    assert gate.threshold <= candidate.confidence <= 1.0
