"""Per-user directories of shadowtab: platformdirs defaults, each overridable by an
environment variable (tests point all four at fresh temp dirs)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import platformdirs

APP_NAME = "shadowtab"

RUNTIME_DIR_ENV = "SHADOWTAB_RUNTIME_DIR"
STATE_DIR_ENV = "SHADOWTAB_STATE_DIR"
CONFIG_DIR_ENV = "SHADOWTAB_CONFIG_DIR"
DATA_DIR_ENV = "SHADOWTAB_DATA_DIR"
DIR_ENV_VARS = (RUNTIME_DIR_ENV, STATE_DIR_ENV, CONFIG_DIR_ENV, DATA_DIR_ENV)


def _from_env(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser().absolute() if value else None


def runtime_dir() -> Path:
    """Sockets, status and lock files. Created mode 0700: the permission on this
    directory is what keeps other users away from the sockets."""
    path = _from_env(RUNTIME_DIR_ENV) or _default_runtime_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)  # an existing dir made by someone with a looser umask
    return path


def _default_runtime_dir() -> Path:
    # Without XDG_RUNTIME_DIR (containers, ssh without a session) platformdirs falls back
    # to /tmp/runtime-UID and warns; the fallback is fine and the warning is noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir(APP_NAME))


def state_dir() -> Path:
    """Logs and shadow-edit journals."""
    return _from_env(STATE_DIR_ENV) or Path(platformdirs.user_state_dir(APP_NAME))


def config_dir() -> Path:
    """The user's `shadowtab.toml`."""
    return _from_env(CONFIG_DIR_ENV) or Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Downloaded or converted models and other large data."""
    return _from_env(DATA_DIR_ENV) or Path(platformdirs.user_data_dir(APP_NAME))
