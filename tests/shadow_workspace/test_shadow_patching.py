"""Unified diffs from agents: parsed with unidiff, applied strictly (context must match,
a hunk may have moved, no fuzz); malformed or unsupported patches get a clear error."""

from __future__ import annotations

import pytest
from shadowtab.shadow_workspace.patching import PatchError, apply_hunks, parse_patch

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


def apply(patch: str, text: str = TEXT) -> str:
    (file_patch,) = parse_patch(patch)
    return apply_hunks(text, file_patch.hunks, file_patch.path)


def test_two_hunks_git_style() -> None:
    patch = (
        "diff --git a/app.py b/app.py\n"
        "--- a/app.py\n+++ b/app.py\n"
        "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
        "@@ -17,3 +17,4 @@\n line 17\n line 18\n+inserted\n line 19\n"
    )
    (file_patch,) = parse_patch(patch)
    assert file_patch.path == "app.py" and not file_patch.new_file
    result = apply(patch)
    assert "LINE THREE\n" in result and "line 3\n" not in result
    assert "line 18\ninserted\nline 19\n" in result
    assert result.count("\n") == 21


def test_a_hunk_that_moved_still_applies_where_its_context_is() -> None:
    moved = "header\n" * 5 + TEXT  # the hunk says line 2, its context is at line 7 now
    patch = "--- app.py\n+++ app.py\n@@ -2,2 +2,2 @@\n line 2\n-line 3\n+three\n"
    assert "line 2\nthree\nline 4\n" in apply(patch, moved)


def test_a_wrong_context_line_is_named() -> None:
    patch = "--- a/app.py\n+++ b/app.py\n@@ -2,2 +2,2 @@\n line 2\n-line three\n+3\n"
    with pytest.raises(PatchError, match=r"hunk 1 of app.py .* line 3 is 'line 3'.*'line three'"):
        apply(patch)


def test_hunks_apply_in_order_and_never_overlap() -> None:
    # the second hunk's context is only before the first hunk's end: refused
    patch = (
        "--- a/app.py\n+++ b/app.py\n"
        "@@ -5,1 +5,1 @@\n-line 5\n+five\n"
        "@@ -2,1 +2,1 @@\n-line 2\n+two\n"
    )
    with pytest.raises(PatchError, match="hunk 2"):
        apply(patch)


def test_no_newline_at_end_of_file() -> None:
    text = "a\nb"
    patch = (
        "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
        "+c\n\\ No newline at end of file\n"
    )
    assert apply(patch, text) == "a\nc"


def test_appending_after_a_last_line_without_newline() -> None:
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1,0 +2,1 @@\n+b\n"
    assert apply(patch, "a") == "a\nb\n"


def test_crlf_text_matches_an_lf_patch() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    assert apply(patch, text) == "one\r\nTWO\nthree\r\n"  # the workspace writes the eol


def test_a_new_file() -> None:
    patch = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    (file_patch,) = parse_patch(patch)
    assert file_patch.new_file and file_patch.path == "pkg/new.py"
    assert apply(patch, "") == "x = 1\ny = 2\n"


def test_several_files() -> None:
    patch = (
        "--- a/one.py\n+++ b/one.py\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/two/three.py\n+++ b/two/three.py\n@@ -1 +1 @@\n-c\n+d\n"
    )
    assert [f.path for f in parse_patch(patch)] == ["one.py", "two/three.py"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "no file changes"),
        ("just some text\nnot a diff\n", "no file changes"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,2 @@\n a\n-b\n", "malformed patch"),
        ("--- a/x.py\n+++ b/x.py\n", "no hunks"),
        ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "both sides"),
        ("--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n", "without `rename from`"),
        (
            "diff --git a/x.bin b/x.bin\nindex 1..2 100644\n"
            "Binary files a/x.bin and b/x.bin differ\n",
            "binary patches",
        ),
        (
            "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
            "--- a/x.py\n+++ b/x.py\n@@ -2 +2 @@\n-c\n+d\n",
            "twice",
        ),
    ],
)
def test_malformed_or_unsupported_patches(patch: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        parse_patch(patch)


def test_a_hunk_past_the_end_of_the_text() -> None:
    patch = "--- a/x.py\n+++ b/x.py\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n"
    with pytest.raises(PatchError, match=r"hunk 1 of x\.py"):
        apply(patch, "a\nb\n")
