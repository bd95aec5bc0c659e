"""The editor clients that ship in the package: the VS Code extension built as a .vsix
(editors/vscode/shadowtab.vsix, rebuilt by scripts/build_vsix.py) and the Neovim Lua
module (editors/nvim). `shadowtab editor install vscode|nvim` sets them up."""
