"""Overlay documents and edits (UTF-16 positions), save lock, linters run on unsaved
text, disk watcher, atomic commit, journal. Imports nothing from lsp, inference, daemon."""
