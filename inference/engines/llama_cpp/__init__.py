"""What binds the local engine to llama.cpp (llama-cpp-python, low-level API): `engine`
is LlamaCppEngine (LocalEngine over the llama.cpp runtime), `runtime` wraps the native
calls, `adapter` attaches a LoRA, `merged_adapter` merges one into the weights,
`requantize` converts the packaged weights, `extra_buffers` keeps the weights out of
llama.cpp's AMX and repacked layouts, `weight_choice` measures which conversion is
fastest on this CPU, `native_log` routes llama.cpp's log lines. In the product only the
engine factory (engines/__init__.py) and the package's public name
(inference.LlamaCppEngine) import it; tests, benchmarks and training import
`extra_buffers` for what they load through llama-cpp-python's `Llama`."""
