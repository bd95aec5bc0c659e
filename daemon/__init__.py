"""Process lifecycle: the `shadowtab` CLI, daemon start/stop/status, status file,
sockets, the msgpack control protocol, configuration."""
