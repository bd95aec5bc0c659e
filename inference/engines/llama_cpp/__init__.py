"""The embedded llama.cpp engine (llama-cpp-python, low-level API): `engine` is the
Engine; `runtime` wraps the native calls, `kv_cache` decides which prefixes stay
resident, `decoding`/`draft` do greedy and speculative decoding, `generation` runs one
request, `scheduling` serializes requests, `model_files` finds and requantizes GGUF
files, `text_output` turns tokens into (streamed) text."""
