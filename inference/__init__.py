"""Engines (llama.cpp default), KV cache manager, prompt formats, speculative edits,
predictors. Imports nothing from lsp, shadow_workspace, daemon."""
