"""The torch engine (`TorchEngine` in engine.py): the packaged model, or any model
transformers loads, run through torch by the shared local engine (local/), with its
runtime, model loading and CPU thread choice; and the peft side of adapters, which needs
the torch extra too: a GGUF LoRA read back into peft's terms (gguf_lora.py), merged into
the model (lora.py) or written as a peft directory (peft_export.py, for vLLM and peft).
Importing this package imports nothing: torch loads with engine.py's modules. Inside it,
`import torch` is an absolute import and means the real torch package."""
