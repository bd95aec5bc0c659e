"""Pure logic: draft cursor, stop strings, prompt truncation, prefix cache bookkeeping."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
from shadowtab.inference.engines.api import RequestStats, truncate_prompt
from shadowtab.inference.engines.local.decoding import SequenceWriter, TokenSink, prefill
from shadowtab.inference.engines.local.draft import (
    PASS_COST,
    DraftCursor,
    DraftPolicy,
    pass_cost,
    steps_per_token,
)
from shadowtab.inference.engines.local.kv_cache import PrefixCache, common_prefix_length
from shadowtab.inference.engines.local.lookup import lookup_draft
from shadowtab.inference.engines.local.speculative import BRANCH_PATIENCE, Branch, speculative
from shadowtab.inference.engines.text_output import TextAssembler


def follow(cursor: DraftCursor, produced: list[int]) -> list[int | None]:
    """Feed tokens one by one as a plain decoder would; the pointer after each."""
    output: list[int] = []
    positions: list[int | None] = []
    for token in produced:
        proposed = len(cursor.proposal())
        accepted = 0
        output.append(token)
        cursor.advance(proposed, accepted, token, output)
        positions.append(cursor.pos)
    return positions


def test_draft_cursor_follows_identical_output() -> None:
    draft = list(range(100, 140))
    cursor = DraftCursor(draft)
    assert follow(cursor, draft[:5]) == [1, 2, 3, 4, 5]


def test_draft_cursor_pauses_in_edit_and_realigns_after_it() -> None:
    draft = list(range(100, 140))
    cursor = DraftCursor(draft, DraftPolicy(match_tokens=3))
    # the model keeps 100..104, writes 3 new tokens instead of 105..107, then re-joins at 108
    produced = [*draft[:5], 1, 2, 3, *draft[8:14]]
    positions = follow(cursor, produced)
    assert positions[5:8] == [None, None, None]  # drafting paused inside the edit
    assert positions[-1] == 14  # pointer re-aligned on the original after the edit
    assert cursor.proposal() == draft[14 : 14 + cursor.k]


def test_draft_cursor_realigns_after_deletion_and_insertion() -> None:
    draft = list(range(200, 260))
    cursor = DraftCursor(draft, DraftPolicy(match_tokens=3))
    produced = [*draft[:4], *draft[20:26]]  # 16 original tokens deleted
    assert follow(cursor, produced)[-1] == 26


def test_a_rejoin_the_next_pass_refutes_does_not_move_the_anchor() -> None:
    """A 3-token match far ahead is chance when the pass after it is rejected at once: the
    search goes on around the spot before it, where the output does re-join later."""
    draft = [*range(100, 130), 7, 8, 9, *range(140, 400)]  # 7 8 9 at 30..32
    cursor = DraftCursor(draft, DraftPolicy(match_tokens=3, search_back=16))
    output = [*draft[:5], 1, 7, 8, 9]  # an edit whose tail matches far ahead
    follow(cursor, output)
    assert cursor.pos == 33
    proposed = len(cursor.proposal())
    output.append(2)  # the confirming pass: its first token rejected
    cursor.advance(proposed, 0, 2, output)
    assert cursor.pos is None
    output += draft[6:9]  # the true re-join, next to the edit
    follow(cursor, draft[6:9])
    assert cursor.pos == 9


def test_draft_length_adapts() -> None:
    cursor = DraftCursor(list(range(400)), DraftPolicy(ladder=(2, 4, 8, 63), k_start=4))
    output = [0]
    cursor.advance(0, 0, 0, output)
    cursor.advance(4, 4, 5, [*output, 1, 2, 3, 4, 5])
    assert cursor.k == 8
    cursor.advance(8, 8, 14, list(range(15)))
    assert cursor.k == 8 and cursor.pos == 15  # a 64-token pass does not pay off yet
    cursor.advance(8, 8, 23, list(range(24)))
    assert cursor.k == 63  # at ~98% acceptance it does (the cost curve)
    cursor.advance(63, 63, 87, list(range(88)))
    assert cursor.k == 63  # the longest rung
    cursor.advance(63, 5, 999, [])
    assert cursor.k == 4 and cursor.pos is None  # the longest rung <= accepted + 1


def test_low_acceptance_keeps_passes_short() -> None:
    policy = DraftPolicy(prior_acceptance=0.6)
    cursor = DraftCursor(list(range(400)), policy)
    cursor.advance(0, 0, 0, [0])
    for _ in range(4):  # fully accepted passes, but the estimate stays low
        k = cursor.k
        assert cursor.pos is not None
        end = cursor.pos + k
        cursor.advance(k, k, end, list(range(end + 1)))
    assert cursor.k <= 16


def test_pass_cost_is_the_measured_curve_and_linear_between() -> None:
    assert pass_cost(1) == 1.0 and pass_cost(64) == 16.7
    assert 11.0 < pass_cost(48) < 16.7
    assert steps_per_token(63, 0.99, PASS_COST) < steps_per_token(32, 0.99, PASS_COST)
    assert steps_per_token(63, 0.9, PASS_COST) > steps_per_token(32, 0.9, PASS_COST)


def test_text_assembler_cuts_at_stop_and_streams_without_it() -> None:
    pieces: list[str] = []
    text = TextAssembler(["<|end|>"], pieces.append)
    for part in ["def f", "():\n  ", "return 1<|e", "nd|> more"]:
        if text.add(part.encode()):
            break
    assert text.finish() == "def f():\n  return 1"
    assert "".join(pieces) == "def f():\n  return 1"


def test_text_assembler_joins_split_utf8() -> None:
    text = TextAssembler([])
    data = "é€".encode()
    for i in range(len(data)):
        text.add(data[i : i + 1])
    assert text.finish() == "é€"


def test_truncate_prompt_drops_from_the_start() -> None:
    tokens = list(range(100))
    kept, dropped = truncate_prompt(tokens, 40, keep_first=False)
    assert kept == list(range(60, 100)) and dropped == 60
    kept, dropped = truncate_prompt(tokens, 40, keep_first=True)
    assert kept[0] == 0 and kept[1:] == list(range(61, 100)) and len(kept) == 40


class RecordingOps:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int, int]] = []

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None:
        self.calls.append(("rm", seq, start, end))

    def seq_copy(self, src: int, dst: int, end: int) -> None:
        self.calls.append(("cp", src, dst, end))


def test_common_prefix_length() -> None:
    assert common_prefix_length([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix_length([1, 2], [1, 2, 3]) == 2
    assert common_prefix_length([], [1]) == 0


def test_prefix_cache_reuses_in_place_and_forks_a_shared_head() -> None:
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=4, capacity_tokens=1000, n_cells=1000)
    doc_a = [1, 2, 3, *range(10, 50)]
    first = cache.place(doc_a, len(doc_a))
    cache.record(first.seq, doc_a)
    typed = [*doc_a[:-1], 99]  # next keystroke: same document
    again = cache.place(typed, len(typed))
    assert (again.seq, again.reused) == (first.seq, len(doc_a) - 1)
    cache.record(again.seq, typed)
    doc_b = [1, 2, 3, *range(60, 100)]  # another document, same instructions
    other = cache.place(doc_b, len(doc_b))
    assert other.seq != first.seq and other.reused == 3
    assert ("cp", first.seq, other.seq, 3) in ops.calls


def test_prefix_cache_evicts_least_recently_used_over_budget() -> None:
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=4, capacity_tokens=100, n_cells=200)
    docs = [[d, *range(d * 100, d * 100 + 39)] for d in (1, 2, 3)]  # 40 tokens each
    seqs = []
    for doc in docs[:2]:
        placed = cache.place(doc, len(doc))
        cache.record(placed.seq, doc)
        seqs.append(placed.seq)
    touched = cache.place(docs[0], len(docs[0]))  # doc 1 used again: doc 2 is now oldest
    cache.record(touched.seq, docs[0])
    placed = cache.place(docs[2], len(docs[2]))
    cache.record(placed.seq, docs[2])
    assert cache.used_tokens() <= 100
    assert ("rm", seqs[1], 0, -1) in ops.calls
    assert ("rm", seqs[0], 0, -1) not in ops.calls
    assert sorted(cache.info(1).resident_prefixes) == [40, 40]


def test_borrowed_sequences_come_free_or_from_the_least_recent_and_go_back_empty() -> None:
    """Extra candidates borrow whole sequences (a stream each): free ones first, then the
    least recently used prefixes', never a pinned one (the request's own)."""
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=3, capacity_tokens=1000, n_cells=1000)
    docs = [[d, *range(d * 100, d * 100 + 9)] for d in (1, 2)]
    seqs = []
    for doc in docs:
        placed = cache.place(doc, len(doc))
        cache.record(placed.seq, doc)
        seqs.append(placed.seq)
    cache.pin(seqs[1])  # the request asking for candidates
    lent = cache.borrow(3)
    assert len(lent) == 2 and seqs[1] not in lent and seqs[0] in lent  # one free, one evicted
    assert ("rm", seqs[0], 0, -1) in ops.calls
    assert cache.borrow(1) == []  # nothing left to lend
    cache.give_back(lent)
    cache.unpin(seqs[1])
    assert cache.info(1).resident_prefixes == [10]
    assert len(cache.borrow(2)) == 2


def test_a_prompt_sharing_only_the_head_forks_and_both_stay_resident() -> None:
    """Ghost text's continuation shares the next-edit prompt's first section; placed in
    place it would discard the next-edit prompt's tail (and that one its own)."""
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=4, capacity_tokens=1000, n_cells=1000)
    head = list(range(100, 160))
    next_edit = [*head, *range(500, 560)]  # the head is half of it
    continuation = [*head, *range(700, 720)]
    first = cache.place(next_edit, len(next_edit))
    cache.record(first.seq, next_edit)
    forked = cache.place(continuation, len(continuation))
    assert forked.seq != first.seq and forked.reused == len(head)
    assert ("rm", first.seq, len(head), -1) not in ops.calls
    cache.record(forked.seq, continuation)
    again = cache.place([*next_edit[:-2], 1, 2], len(next_edit))  # its next keystroke
    assert again.seq == first.seq and again.reused == len(next_edit) - 2


def test_a_long_prompt_branching_off_a_short_one_forks_it() -> None:
    """The next-edit prompt placed after the continuation (warmed first): it shares all
    but the continuation's last tokens and goes on for hundreds; in place it would cost
    the continuation's tail, which ghost text asks for next."""
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=4, capacity_tokens=1000, n_cells=1000)
    head = list(range(100, 300))
    continuation = [*head, *range(700, 724)]
    next_edit = [*head, *range(500, 660)]
    first = cache.place(continuation, len(continuation))
    cache.record(first.seq, continuation)
    branched = cache.place(next_edit, len(next_edit))
    assert branched.seq != first.seq and branched.reused == len(head)
    cache.record(branched.seq, next_edit)
    typed = cache.place([*continuation, 725, 726], len(continuation) + 2)  # a keystroke
    assert typed.seq == first.seq and typed.reused == len(continuation)
    newline = [*continuation[:-1], *range(800, 812)]  # a line further: still a newer version
    cache.record(typed.seq, [*continuation, 725, 726])
    assert cache.place(newline, len(newline)).seq == first.seq


def test_a_fork_stopped_at_the_shared_head_gives_its_slot_back() -> None:
    """A next-edit warm forks the continuation's head and is preempted before its first
    pass: the copy of the head must not stay and cost another document its prompt."""
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=3, capacity_tokens=1000, n_cells=1000)
    head = list(range(100, 160))
    doc_a = [*head, *range(700, 720)]
    doc_b = [9, *range(900, 950)]
    for doc in (doc_a, doc_b):
        cache.record(cache.place(doc, len(doc)).seq, doc)
    warm = cache.place([*head, *range(500, 900)], 460, need_logits=False)
    assert warm.reused == len(head)
    cache.record(warm.seq, head)  # preempted: nothing past the head
    assert sorted(cache.info(1).resident_prefixes) == [len(doc_b), len(doc_a)]
    doc_c = [5, *range(300, 330)]  # a third document: a free slot, nothing evicted
    cache.record(cache.place(doc_c, len(doc_c)).seq, doc_c)
    assert sorted(cache.info(1).resident_prefixes) == [len(doc_c), len(doc_b), len(doc_a)]
    grown = cache.place([*doc_c, 1, 2], len(doc_c) + 2)
    cache.record(grown.seq, [*doc_c, 1, 2])
    assert sorted(cache.info(1).resident_prefixes) == [len(doc_c) + 2, len(doc_b), len(doc_a)]


def test_a_pinned_sequence_is_forked_from_never_trimmed_nor_evicted() -> None:
    """A rewrite that lent the engine keeps its sequence while a continuation runs."""
    ops = RecordingOps()
    cache = PrefixCache(ops, n_slots=2, capacity_tokens=1000, n_cells=1000)
    doc = [1, 2, 3, *range(10, 50)]
    rewrite = cache.place(doc, len(doc))
    cache.pin(rewrite.seq)
    typed = [*doc[:-1], 99]  # would continue in place if the sequence were free
    other = cache.place(typed, len(typed))
    assert other.seq != rewrite.seq and ("rm", rewrite.seq, 0, -1) not in ops.calls
    cache.record(other.seq, typed)
    third = cache.place([7, 8, 9], 3)  # both slots taken: only the unpinned one is free
    assert third.seq == other.seq
    assert not [c for c in ops.calls if c[0] == "rm" and c[1] == rewrite.seq]
    cache.unpin(rewrite.seq)
    cache.record(rewrite.seq, doc)
    assert cache.place(typed, len(typed)).seq == rewrite.seq  # free again: in place


def test_after_a_rejoin_one_short_pass_confirms_then_the_rest_is_verified_at_once() -> None:
    draft = list(range(300, 400))
    policy = DraftPolicy(ladder=(2, 4, 8, 16, 32, 63, 127), confirm_tokens=4)
    cursor = DraftCursor(draft, policy)
    produced = [*draft[:10], 1, 2, *draft[12:15]]  # draft[10:12] replaced, then re-joined
    follow(cursor, produced)
    assert cursor.pos == 15 and len(cursor.proposal()) == 4  # a short confirming pass
    cursor.advance(4, 4, draft[19], [*produced, *draft[15:20]])
    assert cursor.proposal() == draft[20:83]  # confirmed: the rest, in a 64-token pass
    cursor.advance(63, 30, 7, [])  # a second edit further on
    assert cursor.k == 16 and cursor.pos is None  # back to the ladder


def test_once_a_rest_pass_is_cut_short_the_request_stays_on_the_ladder() -> None:
    """Scattered edits: verifying the rest after each re-join would waste long passes."""
    draft = list(range(300, 400))
    cursor = DraftCursor(draft, DraftPolicy(confirm_tokens=4))
    output = [*draft[:10], 1, *draft[11:14]]
    follow(cursor, output)
    output += draft[14:19]
    cursor.advance(4, 4, draft[18], output)
    assert len(cursor.proposal()) == 63  # the rest pass
    cursor.advance(63, 6, 2, [*output, *draft[19:25], 2])  # cut short by another edit
    assert cursor.pos is None
    follow(cursor, draft[26:29])  # re-joined after it
    assert cursor.pos == 29
    k = len(cursor.proposal())
    cursor.advance(k, k, draft[29 + k], [])
    assert len(cursor.proposal()) < 63  # confirmed again, but no rest pass this time


def test_a_rejoin_that_is_not_confirmed_keeps_passes_short() -> None:
    draft = list(range(300, 400))
    cursor = DraftCursor(draft, DraftPolicy(confirm_tokens=4))
    follow(cursor, [*draft[:10], 1, 2, *draft[12:15]])
    cursor.advance(4, 1, 9, [])  # the 3-token match was chance
    assert cursor.k <= 2


def test_without_rest_after_rejoin_the_draft_resumes_on_the_ladder() -> None:
    draft = list(range(300, 400))
    cursor = DraftCursor(draft, DraftPolicy(rest_after_rejoin=False))
    produced = [*draft[:10], 1, 2, *draft[12:15]]
    follow(cursor, produced)
    k = cursor.k
    cursor.advance(k, k, draft[15 + k], [*produced, *draft[15 : 16 + k]])
    assert len(cursor.proposal()) <= 2 * k < 60


class ScriptedRuntime:
    """Stands in for llama.cpp under the decoding loop: its 'model' continues any
    sequence by `next_token(tokens)`, with that token's logit highest."""

    vocab = 64
    pass_tile = 0

    def __init__(self, next_token: Callable[[list[int]], int]) -> None:
        self.next_token = next_token
        self.kv: dict[int, list[int]] = {}

    def decode(
        self, tokens: Sequence[int], seq: int, pos: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        held = self.kv.setdefault(seq, [])
        assert len(held) == pos
        held.extend(tokens)
        rows = np.zeros((len(outputs), self.vocab), dtype=np.float32)
        for row, j in enumerate(outputs):
            rows[row, self.next_token(held[: pos + j + 1])] = 10.0
        return rows

    def seq_remove(self, seq: int, start: int, end: int) -> None:
        del self.kv.setdefault(seq, [])[start:]

    def is_end_of_generation(self, token: int) -> bool:
        return token == 0

    def piece(self, token: int) -> bytes:
        return f"<{token}>".encode()


def test_an_alternative_caught_in_a_loop_is_abandoned_though_it_keeps_realigning() -> None:
    """It copies the draft's first 10 tokens, then repeats draft[5:10] forever: every
    repeat re-aligns on the original, but it never gets further through it."""
    draft = list(range(10, 40))
    prompt = [1]

    def looping(tokens: list[int]) -> int:
        out = len(tokens) - len(prompt)
        return draft[out] if out < 10 else draft[5 + (out - 10) % 5]

    runtime = ScriptedRuntime(looping)
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    first = prefill(writer, prompt, 8)
    sink = TokenSink(runtime, 400, TextAssembler([]), lambda: 0.0)  # type: ignore[arg-type]
    speculative(writer, first, draft, sink, RequestStats(), DraftPolicy(), Branch([], draft[0]))
    assert sink.result.finish == "abandoned"
    # passes are what it costs; a lookup drafts the repeats, so a pass may write several
    assert writer.passes <= BRANCH_PATIENCE + 8 and len(sink.result.tokens) < 100


class LinedRuntime(ScriptedRuntime):
    """Every fifth draft token ends a line."""

    vocab = 128

    def piece(self, token: int) -> bytes:
        return f"<{token}>\n".encode() if token % 5 == 4 else f"<{token}>".encode()


def rewrite(model: Callable[[list[int]], int], draft: list[int], policy: DraftPolicy) -> TokenSink:
    runtime = LinedRuntime(model)
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    first = prefill(writer, [1], 8)
    sink = TokenSink(runtime, 400, TextAssembler([]), lambda: 0.0)  # type: ignore[arg-type]
    stats = RequestStats()
    speculative(writer, first, draft, sink, stats, policy)
    sink.result.text = sink.text.finish()
    sink.stats = stats  # type: ignore[attr-defined]
    sink.passes = writer.passes  # type: ignore[attr-defined]
    return sink


def editing_at(changes: dict[int, int], draft: list[int]) -> Callable[[list[int]], int]:
    """A model that copies `draft` but writes changes[i] instead of draft[i]."""
    target = [changes.get(i, t) for i, t in enumerate(draft)]
    return lambda tokens: target[len(tokens) - 1] if len(tokens) - 1 < len(target) else 0


def test_a_rewrite_stops_once_it_copied_a_whole_line_after_its_change() -> None:
    draft = list(range(10, 110))  # 20 lines of 5 tokens
    model = editing_at({12: 120, 13: 121}, draft)
    stopped = rewrite(model, draft, DraftPolicy(stop_after_rejoined_lines=1))
    full = rewrite(model, draft, DraftPolicy(stop_after_rejoined_lines=0))
    assert stopped.result.text == full.result.text  # the rest of the window is the original
    assert (stopped.result.finish, full.result.finish) == ("rejoined", "eos")
    assert stopped.result.tokens == full.result.tokens[: len(stopped.result.tokens)]
    assert stopped.stats.copied_tokens > 60  # type: ignore[attr-defined]
    assert stopped.passes < full.passes  # type: ignore[attr-defined]
    assert len(stopped.result.logprobs) == len(stopped.result.offsets)  # a trace per token


def test_a_rewrite_that_changes_nothing_yet_is_not_stopped() -> None:
    draft = list(range(10, 110))
    model = editing_at({95: 120}, draft)  # the only change is near the end
    stopped = rewrite(model, draft, DraftPolicy(stop_after_rejoined_lines=1))
    assert 120 in stopped.result.tokens
    assert stopped.stats.copied_tokens == 0  # type: ignore[attr-defined]


def test_a_second_change_after_the_rejoin_is_given_up() -> None:
    """The decided trade: after one whole original line the rest is the original's."""
    draft = list(range(10, 110))
    model = editing_at({12: 120, 80: 121}, draft)
    stopped = rewrite(model, draft, DraftPolicy(stop_after_rejoined_lines=1))
    assert 120 in stopped.result.tokens and 121 not in stopped.result.tokens
    full = rewrite(model, draft, DraftPolicy(stop_after_rejoined_lines=0))
    assert 121 in full.result.tokens


def inserting(block: list[int], at: int, draft: list[int]) -> Callable[[list[int]], int]:
    """A model (after a 1-token prompt and `block` in the prompt) that copies `draft`
    but inserts `block` before draft[at]."""
    target = [*draft[:at], *block, *draft[at:]]
    offset = 1 + len(block)  # the prompt: [1, *block]
    return lambda tokens: target[len(tokens) - offset] if len(tokens) - offset < len(target) else 0


def looked_up_rewrite(
    policy: DraftPolicy, unsure: Sequence[int] = (), then_original: bool = False
) -> TokenSink:
    """The model inserts 30 tokens the prompt holds before draft[20]; in the prompt they
    are followed by the original's next tokens when `then_original`."""
    block = list(range(70, 100))
    draft = list(range(10, 60))
    prompt = [1, *block, *(draft[20:30] if then_original else [])]
    # output token i is predicted by the row at sequence position len(prompt) - 1 + i
    offset = len(prompt) - 1
    target = inserting(block, 20, draft)
    model = lambda tokens: target(tokens[: 1 + len(block)] + tokens[len(prompt) :])  # noqa: E731
    runtime = UnsureRuntime(model, {offset + i for i in unsure})
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    first = prefill(writer, prompt, 8)
    sink = TokenSink(runtime, 400, TextAssembler([]), lambda: 0.0, min_token_p=0.5)  # type: ignore[arg-type]
    speculative(writer, first, draft, sink, RequestStats(), policy)
    sink.passes = writer.passes  # type: ignore[attr-defined]
    return sink


def test_lookup_drafts_what_follows_the_latest_earlier_occurrence() -> None:
    history = [5, 6, 7, 1, 2, 9, 9, 5, 6, 7, 3, 4, 8, 5, 6, 7]
    assert lookup_draft(history, 3, 2) == [3, 4]  # the latest, not the first, occurrence
    assert lookup_draft(history, 4, 2) == []  # 8 5 6 7 occurs nowhere before
    assert lookup_draft(history, 0, 2) == lookup_draft(history, 3, 0) == []


def test_an_inserted_stretch_the_prompt_holds_is_drafted_from_it() -> None:
    off = replace(DraftPolicy(stop_after_rejoined_lines=0), lookup_match_tokens=0)
    looked_up = looked_up_rewrite(replace(off, lookup_match_tokens=4))
    plain = looked_up_rewrite(off)
    assert looked_up.result.tokens == plain.result.tokens
    assert looked_up.passes < plain.passes - 10  # type: ignore[attr-defined]


def test_a_looked_up_copy_of_the_original_is_not_judged() -> None:
    """Where the looked-up tokens re-join the original, they are copies, as in a
    single-token step: an unsure one there does not stop the rewrite."""
    policy = DraftPolicy(stop_after_rejoined_lines=0, lookup_match_tokens=4)
    copied = 20 + 30 + 4  # draft[24], written after the insertion, drafted by the lookup
    kept = looked_up_rewrite(policy, unsure=[copied], then_original=True)
    assert kept.result.finish != "unsure" and len(kept.result.tokens) > copied


def test_a_looked_up_token_is_judged_as_a_change() -> None:
    """The inserted stretch is not the original: an unsure token in it stops the rewrite
    though a lookup proposed it."""
    policy = DraftPolicy(stop_after_rejoined_lines=0, lookup_match_tokens=4)
    stopped = looked_up_rewrite(policy, unsure=[20 + 12])
    assert stopped.result.finish == "unsure" and len(stopped.result.tokens) == 32


class UnsureRuntime(LinedRuntime):
    """Its choice is barely preferred (p ~ 0.05) where `unsure(tokens)` says so."""

    def __init__(self, next_token: Callable[[list[int]], int], unsure: set[int]) -> None:
        super().__init__(next_token)
        self.unsure = unsure

    def decode(
        self, tokens: Sequence[int], seq: int, pos: int, outputs: Sequence[int]
    ) -> npt.NDArray[np.float32]:
        rows = super().decode(tokens, seq, pos, outputs)
        for row, j in enumerate(outputs):
            if pos + j in self.unsure:  # the output index this row predicts (1-token prompt)
                rows[row] = np.where(rows[row] > 0, 2.0, 0.0)
        return rows


def judged_rewrite(changes: dict[int, int], unsure: set[int]) -> TokenSink:
    draft = list(range(10, 60))
    runtime = UnsureRuntime(editing_at(changes, draft), unsure)
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    first = prefill(writer, [1], 8)
    sink = TokenSink(runtime, 400, TextAssembler([]), lambda: 0.0, min_token_p=0.5)  # type: ignore[arg-type]
    speculative(writer, first, draft, sink, RequestStats(), DraftPolicy())
    return sink


def test_a_rewrite_stops_at_an_unsure_change_but_not_at_an_unsure_copy() -> None:
    """Output index i is predicted by the row of sequence position i (the prompt is one
    token): an unsure change stops the rewrite there, an unsure copy does not."""
    stopped = judged_rewrite({20: 120}, unsure={20})
    assert stopped.result.finish == "unsure" and 120 not in stopped.result.tokens
    assert len(stopped.result.tokens) == 20
    copied = judged_rewrite({20: 120}, unsure={5})
    assert copied.result.finish != "unsure" and 120 in copied.result.tokens
