"""The model's rewrite of the region around the cursor as a candidate source: render the
situation in a prompt format, decode, parse each answer fail-closed, diff it into
minimal edits and score it; while the user types an edit, the region's lines above it
are given to the model as the start of its answer."""
