"""The engine-neutral half of the engines that run the model in this process: request
handling (`engine`), the prefix cache index (`kv_cache`), greedy decoding (`decoding`),
speculative decoding (`speculative`, `draft`), one request's generation (`generation`),
request scheduling (`scheduling`) and CPU threads (`cpu_load`), all over the `Runtime`
protocol (`runtime`) that llama.cpp's and torch's runtimes implement."""
