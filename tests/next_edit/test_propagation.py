"""Repeat-edit propagation: the user's last replacement offered at the other places where
the old token sequence stands in the same kind of context, nearest first, bounded."""

from __future__ import annotations

import time

from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.propagation.propagation import CompletedEdit, propagate


def edit_once(path: str, before: str, old: str, new: str) -> tuple[CompletedEdit, str]:
    after = before.replace(old, new, 1)
    edit = CompletedEdit.from_texts(path, before, after)
    assert edit is not None
    return edit, after


def apply_all(text: str, candidates: list[Candidate]) -> str:
    for c in sorted(candidates, key=lambda c: c.edit.start, reverse=True):
        text = c.edit.apply(text)
    return text


def line_of(candidate: Candidate, text: str) -> int:
    """The 0-based line of the candidate's edit in `text`: where "Tab to jump" lands."""
    return text.count("\n", 0, candidate.edit.start)


def test_rename_is_offered_at_the_other_uses_nearest_first() -> None:
    before = (
        "def total(value):\n"  # 0
        "    x = value + 1\n"  # 1
        "    return x * value\n"  # 2
        "\n"
        "print(total(3), value)\n"  # 4
    )
    edit, after = edit_once("calc.py", before, "def total(value)", "def total(amount)")
    found = propagate(edit, {"calc.py": after})
    assert [line_of(c, after) for c in found] == [1, 2, 4]
    assert all(c.edit.new_text == "amount" and c.source == "propagation" for c in found)
    assert all(after[c.edit.start : c.edit.end] == "value" for c in found)
    assert all(0 < c.confidence <= 1 for c in found)
    assert apply_all(after, found) == before.replace("value", "amount")


def test_nearest_first_looks_both_ways() -> None:
    lines = ["use(name)\n"] * 3 + ["name = 1\n"] + ["use(name)\n"] * 2
    before = "".join(lines)
    edit, after = edit_once("m.py", before, "name = 1", "title = 1")
    found = propagate(edit, {"m.py": after})
    assert [line_of(c, after) for c in found] == [2, 4, 1, 5, 0]


def test_whole_tokens_only_and_attributes_are_not_bare_names() -> None:
    before = "value = 1\nvalue_2 = value\nself.value = 3\nmy_value = 4\n"
    edit, after = edit_once("a.py", before, "value = 1", "amount = 1")
    found = propagate(edit, {"a.py": after})
    assert [(line_of(c, after), after[c.edit.start : c.edit.end]) for c in found] == [(1, "value")]
    assert found[0].edit.start == after.index("= value") + 2


def test_argument_added_is_repeated_at_identical_calls_only() -> None:
    before = "r = load(path)\nz = load(path)\nw = load(path, cache)\nq = read(path)\n"
    edit, after = edit_once("io.py", before, "r = load(path)", "r = load(path, strict=True)")
    found = propagate(edit, {"io.py": after})
    assert len(found) == 1
    assert (line_of(found[0], after), found[0].edit.new_text) == (1, ", strict=True")
    assert found[0].edit.start == found[0].edit.end  # an insertion, shown as the change alone
    assert apply_all(after, found).count("load(path, strict=True)") == 2


def test_call_swapped() -> None:
    before = "a = json.loads(text)\nb = json.loads(raw)\nc = pickle.loads(raw)\n"
    edit, after = edit_once("s.py", before, "a = json.loads(text)", "a = orjson.loads(text)")
    found = propagate(edit, {"s.py": after})
    assert [(line_of(c, after), c.edit.new_text) for c in found] == [(1, "orjson")]


def test_occurrences_in_strings_and_comments_are_skipped() -> None:
    before = 'count = 0\nprint("count", count)  # count it\n"""count\ncount\n"""\nx = count\n'
    edit, after = edit_once("c.py", before, "count = 0", "total = 0")
    found = propagate(edit, {"c.py": after})
    assert [line_of(c, after) for c in found] == [1, 5]
    assert all(after[c.edit.start - 1] in "( " for c in found)


def test_an_edit_inside_a_comment_propagates_to_comments_only() -> None:
    before = "# see foo_helper\nfoo_helper()\n# foo_helper again\n"
    edit, after = edit_once("d.py", before, "# see foo_helper", "# see bar_helper")
    found = propagate(edit, {"d.py": after})
    assert [(line_of(c, after), c.edit.new_text) for c in found] == [(2, "bar_helper")]


def test_other_open_files_of_the_same_language_after_the_edited_one() -> None:
    before = "def fetch():\n    pass\n\nfetch()\n"
    edit, after = edit_once("a.py", before, "def fetch()", "def retrieve()")
    other = "from a import fetch\nfetch()\n"
    texts = {"b.py": other, "a.py": after, "c.js": "fetch()\n"}
    found = propagate(edit, texts)
    assert [(c.path, line_of(c, texts[c.path])) for c in found] == [
        ("a.py", 3),
        ("b.py", 0),
        ("b.py", 1),
    ]
    assert found[1].confidence < found[0].confidence


def test_ten_thousand_occurrences_are_bounded_and_nearest_first() -> None:
    lines = ["total += item\n"] * 10_000
    lines[5_000] = "item = 0\n"
    before = "".join(lines)
    edit, after = edit_once("big.py", before, "item = 0", "entry = 0")
    started = time.perf_counter()
    found = propagate(edit, {"big.py": after}, max_candidates=10)
    elapsed = time.perf_counter() - started
    assert len(found) == 10
    assert sorted(abs(line_of(c, after) - 5_000) for c in found) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert elapsed < 0.1, elapsed


def test_examination_budget_caps_the_work() -> None:
    before = "x = 1\n" + "y = 'x' + \"x\"\n" * 10_000  # every occurrence is in a string
    edit, after = edit_once("s.py", before, "x = 1", "xx = 1")
    started = time.perf_counter()
    assert propagate(edit, {"s.py": after}, max_examined=50) == []
    assert time.perf_counter() - started < 0.1


def test_no_history_no_candidates() -> None:
    assert propagate(None, {"a.py": "x = 1\n"}) == []
    assert CompletedEdit.from_texts("a.py", "same", "same") is None


def test_nothing_to_repeat() -> None:
    before = "x = 1\ny = 1\n"
    for old, new in (("x = 1", "x  =  1"), ("x = 1\ny", "x = 2\nz")):  # whitespace; lines
        edit, after = edit_once("a.py", before, old, new)
        assert propagate(edit, {"a.py": after}) == []
    edit, after = edit_once("a.py", "f(1)\nf(1)\n", "f(1)", "f(2)")  # no anchor on the line
    assert propagate(edit, {"a.py": after}) == []


def test_places_already_changed_and_overlapping_occurrences_are_skipped() -> None:
    before = "a = compute(x)\nb = cached(compute(x))\nc = compute(x)\n"
    edit, after = edit_once("a.py", before, "a = compute(x)", "a = cached(compute(x))")
    found = propagate(edit, {"a.py": after})
    assert [line_of(c, after) for c in found] == [2]  # line 1 reads `cached(compute(x))` already
    before = "aa.aa.aa\n"
    edit, after = edit_once("b.py", "aa = 0\n" + before, "aa = 0", "bb = 0")
    found = propagate(edit, {"b.py": after})
    assert [c.edit.start for c in found] == [after.index("aa.")]  # the others are attributes


def test_an_inconsistent_edit_is_refused() -> None:
    edit = CompletedEdit("a.py", "abc", "abd", 2, 9, 3)
    assert propagate(edit, {"a.py": "abd"}) == []


def test_a_renamed_definition_is_surer_than_a_changed_use_or_value() -> None:
    before = "def load(path):\n    return path\n\nload(p)\nload(q)\n"
    edit, renamed = edit_once("a.py", before, "def load(", "def fetch(")
    definition = propagate(edit, {"a.py": renamed})
    edit, after = edit_once("a.py", before, "load(p)", "fetch(p)")
    use = propagate(edit, {"a.py": after})
    assert [line_of(c, renamed) for c in definition] == [3, 4]
    assert [line_of(c, after) for c in use] == [4, 0]
    assert min(c.confidence for c in definition) > max(c.confidence for c in use)
    before = "x = dict[str, int]\ny: dict[str, str]\nfrom t import Mapping\n"
    edit, after = edit_once("b.py", before, "x = dict", "x = Mapping")  # an existing name
    swapped = propagate(edit, {"b.py": after})
    edit, after = edit_once("c.py", "a = True\nb = True\n", "a = True", "a = None")
    value = propagate(edit, {"c.py": after})
    assert swapped and value
    assert max(c.confidence for c in swapped + value) < min(c.confidence for c in definition)


def test_import_lists_and_line_end_insertions_stay_where_they_were() -> None:
    before = "from m import alpha\n\nalpha()\nalpha()\n"
    edit, after = edit_once("a.py", before, "import alpha", "import alpha, beta")
    assert propagate(edit, {"a.py": after}) == []
    before = "value = get(key)\nother = get(key)\nvalue = get(key)\n"
    edit, after = edit_once("b.py", before, "value = get(key)", "value = get(key)  # type: ignore")
    found = propagate(edit, {"b.py": after})
    assert [(line_of(c, after), c.edit.new_text) for c in found] == [(2, "  # type: ignore")]


def test_an_edit_from_a_history_event() -> None:
    now = "def area(width):\n    return width * width\n"
    edit = CompletedEdit.from_event("a.py", now, 9, "size", "width")
    assert edit is not None and edit.before == now.replace("width", "size", 1)
    assert propagate(edit, {"a.py": now}) == []  # nothing named size left
    before = "def area(size):\n    return size * size\n"
    after = before.replace("size", "width", 1)
    edit = CompletedEdit.from_event("a.py", after, 9, "size", "width")
    assert [c.edit.new_text for c in propagate(edit, {"a.py": after})] == ["width", "width"]
    assert CompletedEdit.from_event("a.py", after, 9, "size", "other") is None
    assert CompletedEdit.from_event("a.py", after, 9, "width", "width") is None


def test_a_ten_megabyte_file_stays_fast() -> None:
    line = 'result = compute_total(items, factor)  # "quoted" text\n'
    before = line * 190_000 + "def compute_total(items, factor):\n    pass\n" + line * 100
    edit, after = edit_once("big.py", before, "def compute_total(", "def compute_sum(")
    started = time.perf_counter()
    found = propagate(edit, {"big.py": after}, max_candidates=5)
    assert time.perf_counter() - started < 1.0  # ~50 ms unloaded: a few C-speed scans
    assert sorted(line_of(c, after) for c in found) == [189_998, 189_999, 190_002, 190_003, 190_004]


def test_the_pipeline_source_offers_a_finished_rename_at_the_other_uses() -> None:
    from shadowtab.inference.next_edit.candidates import Query
    from shadowtab.inference.next_edit.events import Edit
    from shadowtab.inference.next_edit.propagation.propagation_source import PropagationSource
    from shadowtab.inference.next_edit.situation import Situation

    before = "def load(path):\n    return open(path)\n\nx = load('a')\ny = load('b')\n"
    after = before.replace("def load", "def read", 1)
    cursor = after.index("y =")  # the user moved on: nothing in progress
    query = Query(
        Situation("m.py", after, cursor),
        n=3,
        events=[Edit("m.py", 0.0, before.index("load"), "load", "read")],
    )
    found = PropagationSource().candidates(query)
    offered = {after[c.edit.start : c.edit.end] + "->" + c.edit.new_text for c in found}
    assert offered == {"load->read"} and len(found) == 2
    starts = sorted(c.edit.start for c in found)
    assert starts == [after.index("load('a')"), after.index("load('b')")]


def test_the_pipeline_source_does_not_propagate_an_edit_being_typed() -> None:
    from shadowtab.inference.next_edit.candidates import Query
    from shadowtab.inference.next_edit.events import Edit
    from shadowtab.inference.next_edit.propagation.propagation_source import PropagationSource
    from shadowtab.inference.next_edit.situation import EditInProgress, Situation

    text = "def rea(path):\n    pass\n\nx = load('a')\n"
    start = text.index("rea")
    query = Query(
        Situation("m.py", text, start + 3, EditInProgress(start, "load", "rea")),
        events=[Edit("m.py", 0.0, start, "load", "rea")],
    )
    assert PropagationSource().candidates(query) == []


def test_a_rename_is_offered_after_a_pause_with_the_cursor_still_at_its_end() -> None:
    """The moment users expect the other places: the whole name replaced, the cursor at
    its end, a pause. Before the pause (still typing) nothing is offered."""
    from shadowtab.inference.next_edit.candidates import Query
    from shadowtab.inference.next_edit.events import Edit
    from shadowtab.inference.next_edit.propagation.propagation_source import (
        RENAME_PAUSE_S,
        PropagationSource,
    )
    from shadowtab.inference.next_edit.situation import EditInProgress, Situation

    text = "def read(path):\n    pass\n\nx = load('a')\ny = load('b')\n"
    start = text.index("read")
    edit = Edit("m.py", 100.0, start, "load", "read")
    situation = Situation("m.py", text, start + 4, EditInProgress(start, "load", "read"))

    def asked(after_s: float | None) -> list[str]:
        query = Query(situation, n=3, events=[edit], asked_at=None)
        if after_s is not None:
            query = Query(situation, n=3, events=[edit], asked_at=100.0 + after_s)
        return [c.edit.new_text for c in PropagationSource().candidates(query)]

    assert asked(RENAME_PAUSE_S + 0.1) == ["read", "read"]
    assert asked(RENAME_PAUSE_S / 3) == []  # still typing
    assert asked(None) == []  # no clock: no pause known
    half = Situation("m.py", text, start + 3, EditInProgress(start, "load", "rea"))
    query = Query(half, n=3, events=[Edit("m.py", 100.0, start, "load", "rea")], asked_at=101.0)
    assert PropagationSource().candidates(query) == []  # the cursor is inside the name
