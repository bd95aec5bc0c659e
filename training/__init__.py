"""Training our own next-edit adapter: mining, LoRA fine-tuning, GGUF export, evaluation.

Not shipped in the wheel; run from a checkout (`python -m training.build --out DIR`).
"""
