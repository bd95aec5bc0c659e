"""`python -m shadowtab.daemon.cli`: the `shadowtab` command without the console script
(tests, benchmarks and the demo's LSP client run it with the current interpreter)."""

import sys

from shadowtab.daemon.cli.main import main

sys.exit(main())
