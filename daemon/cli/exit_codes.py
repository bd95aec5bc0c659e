"""The exit codes every `shadowtab` command returns, and the help epilog that lists them.
Their own module so that the command modules and `main.py` import them without importing
each other."""

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2  # also: the daemon is not running

EPILOG = "exit codes: 0 ok, 1 failure, 2 usage error or daemon not running"
