"""Repeat-edit propagation, no model: what a finished edit replaced (as token sequences,
and what kind of change it is), the other places of the open files where the same
replacement fits, the learned gate that scores each place (its features and its shipped
`propagation_gate.json`), and the candidate source the pipeline asks."""
