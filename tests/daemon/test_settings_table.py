"""One settings table: every place that has a default or a list of keys derives it from
config_schema.SETTINGS (the engine's rows from inference/engines/settings.py), so these
fail when two places disagree."""

from __future__ import annotations

import dataclasses
import inspect
import os
from pathlib import Path
from typing import Any

import pytest
from shadowtab.daemon.cli.main import main
from shadowtab.daemon.config import SECTION_OPTIONS, Settings, load_settings
from shadowtab.daemon.config_reference import reference_markdown
from shadowtab.daemon.config_schema import (
    ENV_SETTINGS,
    OLD_ENV_SETTINGS,
    SETTINGS,
    ConfigError,
    table_from_env,
    validate_table,
)
from shadowtab.inference import EngineOptions
from shadowtab.inference.engines.settings import ENGINE_KINDS, WEIGHT_TYPES
from shadowtab.inference.next_edit.formats import FORMATS
from shadowtab.inference.next_edit.settings import NextEditOptions
from shadowtab.lsp.hub import HubOptions
from shadowtab.lsp.settings import DebounceOptions, LimitsOptions
from shadowtab.shadow_workspace import ShadowWorkspace, Workspaces

NOT_SETTINGS = {"linters", "sources", "deprecations"}  # Settings fields of other kinds
# a key `section.name` is the field `name` of the section's options object
FIELDS = [s for s in SETTINGS if s.replaced_by is None]
NOT_OPTIONS = {"data_dir", "adapter_formats"}  # EngineOptions fields the daemon fills in
# a valid value of each setting that is unset by default
UNSET_EXAMPLES: dict[str, Any] = {
    "engine.model_path": "/models/m.gguf",
    "engine.threads": 2,
    "engine.device": "cpu",
    "engine.adapter_path": "/adapters/a.gguf",
    "engine.base_url": "http://host:8000/v1",
    "engine.model": "served",
    "engine.api_key": "sk-example",
    "engine.adapter_format": "zeta",
}


@pytest.fixture
def empty_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace root with no config file anywhere and no SHADOWTAB_* setting."""
    for name in list(os.environ):
        if name.startswith("SHADOWTAB_"):
            monkeypatch.delenv(name)
    (tmp_path / "cfg").mkdir()
    monkeypatch.setenv("SHADOWTAB_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path


def defaults_of(cls: type[Any]) -> dict[str, Any]:
    found = {}
    for item in dataclasses.fields(cls):
        if item.default is not dataclasses.MISSING:
            found[item.name] = item.default
        elif item.default_factory is not dataclasses.MISSING:
            found[item.name] = item.default_factory()
    return found


def test_engine_options_default_to_what_the_daemon_runs(empty_config: Path) -> None:
    table = {s.name: s.default for s in FIELDS if s.section == "engine"}
    direct = {k: v for k, v in dataclasses.asdict(EngineOptions()).items() if k in table}
    daemon = dataclasses.asdict(load_settings(empty_config).engine_options(empty_config))
    assert direct == table == {k: daemon[k] for k in table}
    assert set(defaults_of(EngineOptions)) - NOT_OPTIONS == set(table)
    assert table["weights"] == "auto" and table["merge_adapter"] is True


def test_llama_cpp_engine_defaults_to_the_table() -> None:
    from shadowtab.inference.engines.llama_cpp.engine import LlamaCppEngine

    parameters = inspect.signature(LlamaCppEngine.__init__).parameters
    options = EngineOptions()
    assert parameters["requantize_to"].default == options.weights
    assert parameters["merge_adapter"].default == options.merge_adapter
    assert parameters["kv_type"].default == options.kv_type
    assert parameters["n_ctx"].default == options.context_size
    assert parameters["kv_cache_mb"].default == options.kv_cache_mb


def test_settings_default_to_the_table(empty_config: Path) -> None:
    """Every key is the field of its name in its section's options object, with the
    table's default; Settings has one field per section and no other setting."""
    sections = {field.name for field in dataclasses.fields(Settings)} - NOT_SETTINGS
    assert sections == {s.section for s in SETTINGS} == set(SECTION_OPTIONS)
    for section, options in SECTION_OPTIONS.items():
        table = {s.name: s.default for s in FIELDS if s.section == section}
        fields = defaults_of(options)
        assert {k: v for k, v in fields.items() if k not in NOT_OPTIONS} == table
        assert getattr(Settings(), section) == options()
    assert load_settings(empty_config) == Settings()


def test_one_name_per_setting() -> None:
    """A setting's variable is its whole key, SHADOWTAB_<SECTION>_<NAME>; a deprecated
    key has none of its own; no variable is both a setting's and an old one, and no old
    name is two settings'."""
    for setting in SETTINGS:
        if setting.replaced_by is not None:
            assert setting.env is None
        elif setting.env is not None:
            assert setting.env == "SHADOWTAB_" + setting.key.upper().replace(".", "_")
        assert not setting.old_env or setting.env or setting.replaced_by
    old_names = [old for setting in SETTINGS for old in setting.old_env]
    assert len(old_names) == len(set(old_names)) == len(OLD_ENV_SETTINGS)
    assert not set(OLD_ENV_SETTINGS) & set(ENV_SETTINGS)


def test_every_earlier_variable_is_still_read() -> None:
    """The variables of every setting before its key became its variable's name (the
    names until 82f6dce, then SHADOWTAB_<NAME> for a few hours) are all still read."""
    before = {  # variable -> key
        "SHADOWTAB_ENGINE_KIND": "engine.kind",  # the same name now
        "SHADOWTAB_ENGINE_PROCESS": "engine.process",  # and now
        "SHADOWTAB_OPENAI_BASE_URL": "engine.base_url",
        "SHADOWTAB_OPENAI_MODEL": "engine.model",
        "SHADOWTAB_OPENAI_API_KEY": "engine.api_key",
        "SHADOWTAB_LINT_DEBOUNCE_MS": "debounce.lint_ms",
        "SHADOWTAB_WARM_DEBOUNCE_MS": "debounce.warm_ms",
        "SHADOWTAB_MAX_DOCUMENT_MB": "limits.document_mb",
        "SHADOWTAB_LINT_MAX_MB": "limits.lint_mb",
        "SHADOWTAB_GHOST_GATE": "next_edit.gate",
    }
    newer = {"next_edit.context_tokens"}  # only ever named by their key
    before |= {
        "SHADOWTAB_" + s.name.upper(): s.key
        for s in SETTINGS
        if (s.env or s.old_env) and s.key not in newer
    }
    for variable, key in before.items():
        setting = ENV_SETTINGS.get(variable) or OLD_ENV_SETTINGS[variable]
        assert setting.key == key, variable


def test_the_language_server_defaults_to_the_table(tmp_path: Path) -> None:
    hub = defaults_of(HubOptions)
    assert hub["debounce"] == DebounceOptions() and hub["limits"] == LimitsOptions()
    assert hub["next_edit"] == NextEditOptions()
    lint_mb = next(s.default for s in SETTINGS if s.key == "limits.lint_mb")
    document_mb = next(s.default for s in SETTINGS if s.key == "limits.document_mb")
    workspace = ShadowWorkspace(tmp_path, None, watch=False)
    try:
        assert workspace.lint_max_chars == int(lint_mb * 2**20)
        assert workspace.store.max_document_bytes == int(document_mb * 2**20)
    finally:
        workspace.close()
    assert Workspaces().lint_max_mb == lint_mb


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.key)
def test_every_setting_is_accepted_documented_and_overridable(setting: Any) -> None:
    example = setting.default if setting.default is not None else UNSET_EXAMPLES[setting.key]
    validate_table({setting.section: {setting.name: example}}, "test")
    assert setting.description and setting.type
    reference = reference_markdown()
    assert f"`{setting.name}`" in reference and f"[{setting.section}]" in reference
    if setting.env is not None:
        assert ENV_SETTINGS[setting.env] is setting and f"`{setting.env}`" in reference
        raw = str(example).lower() if isinstance(example, bool) else str(example)
        table = table_from_env({setting.env: raw})
        assert table == {setting.section: {setting.name: example}}


def test_choices_come_from_the_registries() -> None:
    checks = {s.key: s.check for s in SETTINGS}
    for kind in ENGINE_KINDS:
        assert checks["engine.kind"](kind) is None
    for name in FORMATS:
        assert checks["engine.adapter_format"](name) is None
        assert checks["next_edit.format"](name) is None
    assert checks["engine.kind"]("vllm") is not None
    assert checks["engine.adapter_format"]("auto") is not None  # the predictor's, only
    with pytest.raises(ConfigError, match="q8_0"):
        validate_table({"engine": {"weights": "q5_k"}}, "test")
    assert set(WEIGHT_TYPES) >= {"auto", "as-is", "q8_0"}


def test_config_reference_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--reference"]) == 0
    printed = capsys.readouterr().out
    assert printed == reference_markdown()
    assert "| `weights` | " in printed and '`"auto"`' in printed
    assert printed.count("\n### ") == len({s.section for s in SETTINGS}) + 1  # + linters


def test_the_configuration_document_is_the_table_as_generated() -> None:
    """docs/CONFIGURATION.md, which the README points users to, is the table's own output:
    a setting added, removed or changed without regenerating it fails here."""
    document = Path(__file__).resolve().parents[2] / "docs" / "CONFIGURATION.md"
    assert document.read_text(encoding="utf-8") == reference_markdown(), (
        "regenerate it: shadowtab config --reference > docs/CONFIGURATION.md"
    )
