"""Why a model failed to load, said so that a user knows what to do next.

A load failure reaches people far from the code that raised it: the demo's terminal, an
editor's message, `daemon status`. A bare "No module named 'gguf'" tells them neither
that the install is incomplete nor how to get going again, so every failure is reported
as its reason followed by one concrete next step."""

from __future__ import annotations

from .api import EngineError, ModelLoadError

# Import names whose PyPI distribution is spelled differently.
DISTRIBUTIONS = {"llama_cpp": "llama-cpp-python", "yaml": "pyyaml"}
# Packages that only the optional extras bring, and the extra that brings each.
EXTRAS = {"torch": "torch", "transformers": "torch", "peft": "torch", "accelerate": "torch"}
CONFIG_HINT = "`shadowtab daemon status` shows the engine settings in use"


def describe_load_failure(exc: BaseException) -> str:
    """One line: what went wrong, then what to do about it."""
    return f"{reason(exc)}. {advice(exc)}"


def reason(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"the Python package '{exc.name}' is not installed ({exc})"
    if isinstance(exc, EngineError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def advice(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return _install_advice(exc.name.split(".")[0])
    if isinstance(exc, MemoryError):
        return "Free memory or set engine.kv_cache_mb lower in shadowtab.toml"
    if isinstance(exc, ModelLoadError):
        return (
            "Check engine.model_path in shadowtab.toml, or remove it to use the packaged "
            f"model ({CONFIG_HINT})"
        )
    return (
        "See the daemon's log (`shadowtab daemon status` prints its path); "
        'to run without a model set engine.kind = "off" in shadowtab.toml'
    )


def _install_advice(module: str) -> str:
    distribution = DISTRIBUTIONS.get(module, module)
    extra = EXTRAS.get(module)
    if extra is not None:
        return (
            f"This engine needs the '{extra}' extra: pip install 'shadowtab[{extra}]', "
            'or use the default engine (engine.kind = "llama.cpp")'
        )
    return (
        f"The installation is incomplete: pip install {distribution} "
        "(or reinstall shadowtab with its dependencies)"
    )
