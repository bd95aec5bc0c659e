"""Next-edit prediction over plain data (text, offsets, edits): the predictors and the
pipeline every caller shares sit here, with what every candidate source uses (edit
events, candidates, minimal edits, situations, token confidence, filters, never undoing
the user, the gates' logistic regression); each source lives in its own subpackage
(`ghost_text/`, `rewrite/`, `propagation/`), and the prompt formats in `formats/`."""
