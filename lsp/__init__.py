"""The pygls language server: one session per editor connection, the feature handlers,
and the stdio<->socket shim that editors launch."""
