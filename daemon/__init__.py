"""Process lifecycle: the `shadowtab` CLI (`cli/`), daemon start/stop/status, status
file, sockets, the msgpack control protocol and the commands only it answers (the coding
agents' verbs, the MCP server), configuration."""
