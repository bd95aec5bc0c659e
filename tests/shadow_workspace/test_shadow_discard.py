"""take("discard") drops only the model's pending edits: the user's unsaved typing in the
same files stays. Model spans against user edits before, after and inside them, model
edits that overlap, a journal replay, and a random interleaving checked against an
independent reference."""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from itertools import pairwise
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shadow_helpers import uri_of
from shadowtab.shadow_workspace import (
    DiskBase,
    Range,
    ShadowDocument,
    ShadowWorkspace,
    TextChange,
)
from shadowtab.shadow_workspace.journal import journal_path
from shadowtab.shadow_workspace.model import Author
from shadowtab.shadow_workspace.model_spans import ModelSpan

SOURCE = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"


# -- helpers ----------------------------------------------------------------------------
def document(text: str) -> ShadowDocument:
    return ShadowDocument("file:///t/a.py", Path("/t/a.py"), text, 0, DiskBase("base"), text)


def change_at(doc: ShadowDocument, start: int, end: int, text: str) -> TextChange:
    """A change given by str offsets, sent as LSP does: UTF-16 positions."""
    return TextChange(Range(doc.position_at(start), doc.position_at(end)), text)


def edit(doc: ShadowDocument, start: int, end: int, text: str, author: Author) -> None:
    doc.apply([change_at(doc, start, end, text)], None, author)


def replace_in(doc: ShadowDocument, old: str, new: str, author: Author) -> None:
    start = doc.text.index(old)
    edit(doc, start, start + len(old), new, author)


def spans(doc: ShadowDocument) -> list[tuple[str, str]]:
    """(what the model wrote, what it replaced) per span."""
    return [(doc.text[s.start : s.end], s.original) for s in doc.model_spans.spans]


def opened(ws: ShadowWorkspace, path: Path) -> str:
    uri = uri_of(path)
    ws.open_document(uri, path.read_text(), 1, "python")
    return uri


def type_text(ws: ShadowWorkspace, uri: str, after: str, text: str) -> None:
    """The user types `text` right after the first `after` (an unsaved buffer edit)."""
    doc = ws.document(uri)
    assert doc is not None
    offset = doc.text.index(after) + len(after)
    ws.change_document(uri, doc.version + 1, [change_at(doc, offset, offset, text)])


def model_replaces(ws: ShadowWorkspace, uri: str, old: str, new: str) -> None:
    doc = ws.document(uri)
    assert doc is not None
    start = doc.text.index(old)
    ws.apply_model_edit(uri, [change_at(doc, start, start + len(old), new)])


def text_of(ws: ShadowWorkspace, uri: str) -> str:
    doc = ws.document(uri)
    assert doc is not None
    return doc.text


# -- the editor's scenario --------------------------------------------------------------
def test_discard_keeps_the_users_unsaved_typing(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    type_text(workspace, uri, "import os\n", "import sys  # typed, not saved\n")
    workspace.release()
    model_replaces(workspace, uri, "return 2", "return 2 * 21")
    model_replaces(workspace, uri, "def f():", "def f() -> int:")
    assert "return 2 * 21" in text_of(workspace, uri)
    result = workspace.take("discard")
    expected = SOURCE.replace("import os\n", "import os\nimport sys  # typed, not saved\n")
    assert text_of(workspace, uri) == expected
    assert result.discarded == [uri] and result.to_dict()["kept"] == []
    assert result.pending == [uri] and "+import sys" in result.diff
    assert "return 2 * 21" not in result.diff and "-> int" not in result.diff
    assert path.read_text() == SOURCE and workspace.lock.holder == "user"


def test_discard_without_user_edits_is_the_disk_text(
    workspace: ShadowWorkspace, root: Path, journal_dir: Path
) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    workspace.release()
    model_replaces(workspace, uri, "return 1", "return 10")
    model_replaces(workspace, uri, "import os\n", "")
    result = workspace.take("discard")
    assert text_of(workspace, uri) == SOURCE and not workspace.has_pending()
    assert result.discarded == [uri] and result.pending == [] and result.diff == ""
    workspace.close()
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert again.document(uri) is None and not again.has_pending()
    finally:
        again.close()


def test_discard_of_an_unopened_file_forgets_it(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "b.py"
    path.write_text(SOURCE)
    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(0, 0, 0, 0), "# model\n")])
    assert workspace.take("discard").discarded == [uri_of(path)]
    assert workspace.document(uri_of(path)) is None and path.read_text() == SOURCE


def test_user_only_changes_are_not_discarded(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    type_text(workspace, uri, "return 1", "  # mine")
    workspace.release()
    result = workspace.take("discard")
    assert result.discarded == [] and result.pending == [uri]
    assert "return 1  # mine" in text_of(workspace, uri)


def test_user_edit_inside_a_model_edit_makes_it_theirs(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    workspace.release()
    model_replaces(workspace, uri, "return 1", "return compute()")
    model_replaces(workspace, uri, "return 2", "return 3")
    type_text(workspace, uri, "return comp", "ute_and_")  # inside the model's text
    result = workspace.take("discard")
    assert result.to_dict()["kept"] == [uri] and result.discarded == [uri]
    assert text_of(workspace, uri) == SOURCE.replace("return 1", "return compute_and_ute()")


def test_commit_writes_user_typing_too_and_clears_spans(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    type_text(workspace, uri, "import os\n", "import re\n")
    workspace.release()
    model_replaces(workspace, uri, "return 1", "return 11")
    assert workspace.take("commit").written == [uri]
    assert path.read_text() == SOURCE.replace("os\n", "os\nimport re\n").replace("1\n", "11\n")
    doc = workspace.document(uri)
    assert doc is not None and not doc.model_spans and not doc.pending
    workspace.release()
    assert workspace.take("discard").discarded == []  # nothing of the model's left
    assert text_of(workspace, uri) == path.read_text()


def test_keep_leaves_model_edits_to_discard_later(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    uri = opened(workspace, path)
    type_text(workspace, uri, "def g():", "  # g")
    workspace.release()
    model_replaces(workspace, uri, "return 2", "return 22")
    kept = workspace.take("keep")
    assert kept.pending == [uri] and "+    return 22" in kept.diff
    assert "return 22" in text_of(workspace, uri)
    workspace.take("discard")
    assert text_of(workspace, uri) == SOURCE.replace("def g():", "def g():  # g")


def test_discard_after_a_conflict_follows_the_disk(workspace: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    uri = opened(workspace, path)
    workspace.release()
    workspace.apply_model_edit(uri, [TextChange(None, "x = 2\n")])
    path.write_text("x = 3\n")
    workspace.on_disk_change(path)
    assert workspace.conflicts
    assert workspace.take("discard").discarded == [uri]
    assert text_of(workspace, uri) == "x = 3\n" and not workspace.conflicts
    assert not workspace.has_pending()


def test_discard_in_a_crlf_file_keeps_its_line_endings(
    workspace: ShadowWorkspace, root: Path
) -> None:
    path = root / "w.py"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    uri = uri_of(path)
    workspace.open_document(uri, "a = 1\r\nb = 2\r\n", 1)
    type_text(workspace, uri, "a = 1", "  # mine")
    workspace.release()
    workspace.apply_model_edit(uri, [TextChange(Range.of(1, 0, 1, 0), "c = 3\nd = 4\n")])
    assert text_of(workspace, uri) == "a = 1  # mine\r\nc = 3\r\nd = 4\r\nb = 2\r\n"
    workspace.take("discard")
    assert text_of(workspace, uri) == "a = 1  # mine\r\nb = 2\r\n"
    assert path.read_bytes() == b"a = 1\r\nb = 2\r\n"


# -- spans against edits ----------------------------------------------------------------
def test_user_edits_before_and_after_a_span_shift_or_keep_it() -> None:
    doc = document("aaaa bbbb cccc\n")
    replace_in(doc, "bbbb", "BB", "model")
    edit(doc, 0, 0, "<<", "user")  # before: the span shifts
    edit(doc, len(doc.text) - 1, len(doc.text) - 1, ">>", "user")  # after: it stays
    assert spans(doc) == [("BB", "bbbb")]
    doc.revert_model_edits()
    assert doc.text == "<<aaaa bbbb cccc>>\n"


def test_insertions_at_a_span_boundary_stay_outside_it() -> None:
    doc = document("one two three")
    replace_in(doc, "two", "2", "model")
    start = doc.text.index("2")
    edit(doc, start, start, "[", "user")  # exactly at its start
    edit(doc, start + 2, start + 2, "]", "user")  # exactly at its end
    assert spans(doc) == [("2", "two")] and doc.text == "one [2] three"
    assert doc.model_spans.taken_over == 0
    doc.revert_model_edits()
    assert doc.text == "one [two] three"


def test_user_replacement_ending_at_a_span_start_shifts_it() -> None:
    doc = document("abc def")
    replace_in(doc, "def", "DEF", "model")
    edit(doc, 0, 4, "xyz_", "user")  # "abc " ends where the span starts
    edit(doc, 0, 2, "", "user")
    assert spans(doc) == [("DEF", "def")]
    doc.revert_model_edits()
    assert doc.text == "z_def"


@pytest.mark.parametrize(
    ("start", "end", "text"),
    [(5, 5, "!"), (4, 6, ""), (2, 12, "x"), (0, 15, "")],
    ids=["insert-inside", "delete-inside", "overlap-start", "cover-all"],
)
def test_user_edit_into_a_span_takes_it_over(start: int, end: int, text: str) -> None:
    doc = document("abc MODEL xyz\n")
    edit(doc, 4, 9, "model", "model")
    edit(doc, start, end, text, "user")
    assert not doc.model_spans and doc.model_spans.taken_over == 1
    expected = doc.text
    doc.revert_model_edits()
    assert doc.text == expected  # the user's now: nothing reverted


def test_user_insertion_at_a_model_deletion_keeps_both() -> None:
    doc = document("keep REMOVED keep")
    replace_in(doc, "REMOVED ", "", "model")
    edit(doc, 5, 5, "typed ", "user")  # where the model deleted: before the restored text
    doc.revert_model_edits()
    assert doc.text == "keep REMOVED typed keep"


def test_model_edits_that_overlap_merge_with_the_original_rebuilt() -> None:
    doc = document("0123456789")
    edit(doc, 2, 4, "AB", "model")  # "23" -> "AB"
    edit(doc, 6, 8, "CD", "model")  # "67" -> "CD"
    assert spans(doc) == [("AB", "23"), ("CD", "67")]
    edit(doc, 3, 7, "-", "model")  # over both and the "45" between them
    assert doc.text == "01A-D89" and spans(doc) == [("A-D", "234567")]
    edit(doc, 1, 3, "xy", "model")  # overlaps the merged span's start
    assert spans(doc) == [("xy-D", "1234567")]
    doc.revert_model_edits()
    assert doc.text == "0123456789"


def test_touching_model_edits_merge_and_a_noop_leaves_no_span() -> None:
    doc = document("hello world")
    edit(doc, 0, 5, "HELLO", "model")
    edit(doc, 5, 6, "_", "model")  # touches the end of the first
    assert spans(doc) == [("HELLO_", "hello ")]
    edit(doc, 8, 8, "+", "model")
    edit(doc, 8, 9, "", "model")  # the model takes its own insertion back
    assert spans(doc) == [("HELLO_", "hello ")]
    doc.revert_model_edits()
    assert doc.text == "hello world" and not doc.pending


def test_model_edit_over_user_text_restores_that_text() -> None:
    doc = document("a = 1\n")
    edit(doc, 5, 5, "0", "user")  # "a = 10"
    edit(doc, 0, 7, "b = 2\n", "model")  # the model rewrote the user's line
    doc.revert_model_edits()
    assert doc.text == "a = 10\n"


def test_full_text_model_change_covers_only_what_changed() -> None:
    doc = document("first\nsecond\nthird\n")
    edit(doc, 0, 0, "# user\n", "user")
    doc.apply([TextChange(None, "# user\nfirst\nSECOND\nthird\n")], None, "model")
    assert spans(doc) == [("SECOND", "second")]
    edit(doc, len(doc.text), len(doc.text), "# end\n", "user")
    doc.revert_model_edits()
    assert doc.text == "# user\nfirst\nsecond\nthird\n# end\n"


def test_full_text_changes_that_change_nothing_or_little() -> None:
    doc = document("a = 1\nb = 2\n")
    doc.apply([TextChange(None, "a = 1\nb = 2\n")], None, "model")  # the same text
    assert not doc.model_spans
    edit(doc, 4, 5, "10", "model")
    doc.apply([TextChange(None, "a = 10\nb = 2\n# user\n")], None, "user")  # full sync
    assert spans(doc) == [("10", "1")]
    doc.revert_model_edits()
    assert doc.text == "a = 1\nb = 2\n# user\n"


def test_astral_characters_keep_offsets_in_code_points() -> None:
    doc = document("😀 a 😀 b\n")
    replace_in(doc, "a", "😀😀", "model")
    edit(doc, 0, 0, "😀", "user")
    edit(doc, len(doc.text) - 1, len(doc.text) - 1, "é", "user")
    doc.revert_model_edits()
    assert doc.text == "😀😀 a 😀 bé\n"


# -- the journal ------------------------------------------------------------------------
def test_discard_after_a_restart(root: Path, journal_dir: Path) -> None:
    path = root / "a.py"
    path.write_text(SOURCE)
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    uri = opened(ws, path)
    type_text(ws, uri, "import os\n", "import sys\n")
    ws.release()
    model_replaces(ws, uri, "return 1", "return 100")
    type_text(ws, uri, "def g():", "  # user, after the model edit")
    model_replaces(ws, uri, "return 2", "return 200")
    model_replaces(ws, uri, "import os", "import os, re")
    type_text(ws, uri, "import os,", "  ")  # inside the model's edit: the user's now
    ws.close()
    for _restart in range(2):  # replayed edit records, then the compacted snapshot
        ws = ShadowWorkspace(root, journal_dir, watch=False)
        doc = ws.document(uri)
        assert doc is not None and doc.model_spans.taken_over == 1
        assert spans(doc) == [("return 100", "return 1"), ("return 200", "return 2")]
        ws.close()
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    result = ws.take("discard")
    assert result.discarded == [uri] and result.to_dict()["kept"] == [uri]
    expected = SOURCE.replace("os\n", "os,   re\nimport sys\n").replace(
        "g():", "g():  # user, after the model edit"
    )
    assert text_of(ws, uri) == expected
    ws.close()
    again = ShadowWorkspace(root, journal_dir, watch=False)  # the discard was journaled
    try:
        assert text_of(again, uri) == expected
        doc = again.document(uri)
        assert doc is not None and not doc.model_spans
        assert path.read_text() == SOURCE
    finally:
        again.close()


def test_journal_without_spans_discards_the_whole_change(root: Path, journal_dir: Path) -> None:
    """A journal written before spans were recorded: its model change is reverted whole."""
    path = root / "a.py"
    path.write_text("x = 1\n")
    uri = uri_of(path)
    no_journal = ShadowWorkspace(root, None, watch=False)
    try:
        disk = no_journal.load_document(uri).base.to_dict()
    finally:
        no_journal.close()
    journal_dir.mkdir(parents=True)
    snapshot = {"t": "snap", "key": uri, "uri": uri, "path": str(path), "version": 3}
    snapshot |= {"base": disk, "base_text": "x = 1\n", "text": "x = 1\ny = 2\n"}
    snapshot |= {"model_edits": 1, "language_id": "python", "bom": False}
    with open(journal_path(journal_dir, root.resolve()), "ab") as handle:
        handle.write(msgpack.packb(snapshot, use_bin_type=True))
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert text_of(again, uri) == "x = 1\ny = 2\n"
        assert again.take("discard").discarded == [uri]
        assert again.document(uri) is None and not again.has_pending()
    finally:
        again.close()


@pytest.mark.parametrize("bad", [[[4, 99, "1"]], [[3, 1, "1"]], [["x"]], 7])
def test_corrupt_spans_in_the_journal_keep_the_text(
    root: Path, journal_dir: Path, bad: object
) -> None:
    """Spans that cannot be right: the pending text still comes back, and a discard
    leaves it alone rather than guess (it might revert the user's typing)."""
    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.release()
    ws.apply_model_edit(uri_of(path), [TextChange(Range.of(0, 4, 0, 5), "2")])
    ws.close()
    journal = journal_path(journal_dir, root.resolve())
    records = list(msgpack.Unpacker(BytesIO(journal.read_bytes()), raw=False))
    next(r for r in records if r["t"] == "snap")["model_spans"] = bad
    journal.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert text_of(again, uri_of(path)) == "x = 2\n" and again.lock.holder == "model"
        assert again.take("discard").discarded == []
        assert text_of(again, uri_of(path)) == "x = 2\n" and path.read_text() == "x = 1\n"
    finally:
        again.close()


# -- a random interleaving against an independent reference ------------------------------
@dataclass
class Atom:
    """A piece of the document: `current` is in the text; `reference` is what it stands
    for once the model's edits are dropped (a user character stands for itself)."""

    current: str
    reference: str
    model: bool


class AtomText:
    """The reference: the document as user characters and model pieces. It knows nothing
    of spans; discarding is joining the references."""

    def __init__(self, text: str) -> None:
        self.atoms = [Atom(char, char, False) for char in text]

    @property
    def text(self) -> str:
        return "".join(atom.current for atom in self.atoms)

    @property
    def without_model(self) -> str:
        return "".join(atom.reference for atom in self.atoms)

    def bounds(self) -> list[tuple[int, int]]:
        out, offset = [], 0
        for atom in self.atoms:
            out.append((offset, offset + len(atom.current)))
            offset += len(atom.current)
        return out

    def user_gaps(self) -> list[tuple[int, int]]:
        """Inclusive ranges of offsets where a user edit touches no model piece."""
        gaps, low = [], 0
        for (start, end), atom in zip(self.bounds(), self.atoms, strict=True):
            if atom.model:
                gaps.append((low, start - 1))
                low = end + 1
        gaps.append((low, len(self.text)))
        return [(lo, hi) for lo, hi in gaps if lo <= hi]

    def user_edit(self, start: int, end: int, text: str) -> None:
        first = next((i for i, (s, _e) in enumerate(self.bounds()) if s >= start), None)
        first = len(self.atoms) if first is None else first
        self.atoms[first : first + end - start] = [Atom(c, c, False) for c in text]

    def model_edit(self, start: int, end: int, text: str) -> None:
        bounds = self.bounds()
        hit = [
            i
            for i, (s, e) in enumerate(bounds)
            if (s < end and e > start) or (start == end and s < start < e)
        ]
        if not hit:
            if text:
                at = next((i for i, (s, _e) in enumerate(bounds) if s >= start), len(bounds))
                self.atoms.insert(at, Atom(text, "", True))
            return
        first, last = hit[0], hit[-1]
        head = self.atoms[first].current[: max(0, start - bounds[first][0])]
        tail = self.atoms[last].current[max(0, end - bounds[last][0]) :]
        reference = "".join(atom.reference for atom in self.atoms[first : last + 1])
        self.atoms[first : last + 1] = [Atom(head + text + tail, reference, True)]


pieces = st.text(alphabet="ab\n😀é", max_size=5)
fraction = st.floats(0, 1)
steps = st.lists(
    st.tuples(st.sampled_from(["user", "model"]), fraction, fraction, fraction, pieces),
    max_size=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.text(alphabet="ab\n😀é", max_size=30), script=steps)
def test_discard_equals_applying_only_the_user_edits(
    base: str, script: list[tuple[str, float, float, float, str]]
) -> None:
    doc, reference = document(base), AtomText(base)
    for author, where, at, width, text in script:
        if author == "model":
            start = round(at * len(doc.text))
            end = start + round(width * (len(doc.text) - start))
            edit(doc, start, end, text, "model")
            reference.model_edit(start, end, text)
        else:
            gaps = reference.user_gaps()
            if not gaps:  # the model's text fills the document: nowhere to type apart
                continue
            low, high = gaps[min(int(where * len(gaps)), len(gaps) - 1)]
            start = low + round(at * (high - low))
            end = start + round(width * (high - start))
            edit(doc, start, end, text, "user")
            reference.user_edit(start, end, text)
        assert doc.text == reference.text
    assert doc.model_spans.taken_over == 0
    doc.revert_model_edits()
    assert doc.text == reference.without_model
    assert not doc.model_spans


def test_spans_stay_ordered_and_disjoint() -> None:
    doc = document("x" * 50)
    for start in (40, 30, 10, 20, 0):
        edit(doc, start, start + 5, "yyy", "model")
    found = doc.model_spans.spans
    assert found == sorted(found, key=lambda span: span.start)
    assert all(a.end < b.start for a, b in pairwise(found))
    assert all(span.original == "xxxxx" for span in found)
    assert found[0] == ModelSpan(0, 3, "xxxxx")
