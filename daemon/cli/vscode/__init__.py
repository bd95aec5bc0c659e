"""Installing the packaged VS Code extension for `shadowtab editor install vscode`:
finding the `code` CLIs (`locations.py`), installing the `.vsix` and writing this
install's `shadowtab` path into VS Code's settings.json (`install.py`), editing that
JSON-with-comments file in place (`jsonc_edit.py`)."""
