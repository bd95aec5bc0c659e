"""A source file and a typing session on it, shared by the next-edit tests."""

from __future__ import annotations

from shadowtab.inference.next_edit.events import Edit

SOURCE = "".join(
    f"def handler_{i}(request, response):\n"
    f"    value = request.get('field_{i}', {i})\n"
    f"    response.write(str(value * {i}))\n"
    f"    return response\n\n"
    for i in range(40)
)
OLD_LINE = "    value = request.get('field_20', 20)\n"
NEW_LINE = "    value = request.params.get('field_20', default=20)\n"


def typing_session() -> list[tuple[str, int, list[Edit]]]:
    """The user deletes OLD_LINE's text (keeping its indent) and types NEW_LINE's, one
    character every 0.15 s: (text, cursor, edits so far) after each keystroke."""
    start = SOURCE.index(OLD_LINE) + 4
    old = OLD_LINE[4:-1]
    text = SOURCE[:start] + SOURCE[start + len(old) :]
    edits = [Edit("m.py", 0.0, start, old, "")]
    steps = []
    for i, char in enumerate(NEW_LINE[4:-1]):
        at = start + i
        text = text[:at] + char + text[at:]
        edits = [*edits, Edit("m.py", 0.15 * (i + 1), at, "", char)]
        steps.append((text, at + 1, edits))
    return steps
