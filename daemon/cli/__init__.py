"""The `shadowtab` command line: `main.py` builds the argparse front from a plain table of
command modules (one per command group: `daemon.py`, `lsp.py`, `lock.py`, ...), each of
which adds its subcommands with `register(subparsers)`; `exit_codes.py` holds the exit
codes they all return. The modules only a command uses sit beside it (`demo_tour.py`,
`model_wait.py`, `vscode/`); the running daemon's own modules stay in `shadowtab.daemon`.
"""
