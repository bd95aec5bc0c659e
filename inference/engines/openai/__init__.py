"""The OpenAI-compatible engine (`OpenAIEngine` in engine.py): the Engine interface over a
remote completions server (vLLM, SGLang, llama.cpp's server), with its HTTP client
(client.py, on httpx), answers and log-probabilities (answer.py), token usage (usage.py),
tokenizing through the server (tokens.py) and the server's adapter (adapter.py). It uses
no `openai` client package; importing this package imports nothing."""
