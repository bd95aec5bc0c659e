"""Ghost text: the plain continuation at the cursor as a candidate source (its cache-aware
prompt, the re-join with the rest of the line in mid-line), the repetition source that
continues the line from the open files themselves, and the learned gate (with the
features it reads) that decides where to cut a continuation or whether to show it."""
