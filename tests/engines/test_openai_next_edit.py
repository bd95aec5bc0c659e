"""The next-edit predictor over OpenAIEngine on a real server (llama-cpp-python's, the
packaged model): the model's rewrite comes back as a complete answer (the generic
format's fence is a stop string, told apart from the end token), and the predictor
offers ghost text scored from the server's log-probabilities."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.formats import stop_strings
from shadowtab.inference.next_edit.predictor import (
    EnginePredictor,
    PredictionRequest,
    query_of,
)

if TYPE_CHECKING:
    from shadowtab.inference.engines.openai.engine import OpenAIEngine

OLD = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
TYPED = "    return w * h  # square "
AT = OLD.index("    return")
TEXT = OLD[:AT] + TYPED + OLD[AT + len("    return w * h") :]
EVENTS = [Edit("a.py", 0.0, AT, "    return w * h", ""), Edit("a.py", 0.2, AT, "", TYPED)]
REQUEST = PredictionRequest("a.py", "python", TEXT, AT + len(TYPED), EVENTS, 2)


def test_the_rewrite_is_a_complete_answer(openai_engine: OpenAIEngine) -> None:
    predictor = EnginePredictor(lambda: openai_engine)
    query: Query = query_of(REQUEST)
    rendered = predictor.model.prompt(query)
    assert rendered is not None
    stop = stop_strings(predictor.model.format, rendered)
    answer = openai_engine.rewrite(rendered.prompt, rendered.draft, 96, stop=list(stop))
    assert answer.finish_reasons == ["stop"]  # the fence: the format's complete answers
    assert len(answer.logprobs[0]) == len(answer.text_offsets[0]) >= 1
    assert predictor.model.format.parse(answer.texts[0], "stop") is not None


def test_the_predictor_suggests_over_the_server(openai_engine: OpenAIEngine) -> None:
    """Without the token cut (threshold 0): ghost text in this comment is a guess the
    cut rightly withholds (tests/engines/test_token_cut.py cuts over the server)."""
    predictor = EnginePredictor(lambda: openai_engine, token_threshold=0.0)
    for candidate in predictor.next_edit(REQUEST):
        result = candidate.edit.apply(TEXT)
        assert TYPED.strip() in result and 0 < candidate.confidence <= 1
    inline = predictor.inline(REQUEST)
    assert inline, "no ghost text at the cursor"
    assert all(c.edit.new_text.strip() and 0 < c.confidence <= 1 for c in inline)
