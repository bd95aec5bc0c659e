"""Scripts that measure the product side by side and print one JSON line each, run from
the repository root as modules (`python -m benchmarks.next_edit_eval`). They import the
product as `shadowtab.*` and the edit corpora, the held-back split and the evaluation's
cases and criterion from `training`; `training` never imports them. Not in the wheel."""
