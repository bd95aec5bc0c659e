"""Settings: defaults, user and workspace files, environment overrides, validation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from shadowtab.daemon.config import ConfigError, Settings, load_settings
from shadowtab.inference.engines.options import EngineOptions


@pytest.fixture
def config_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(user config dir, workspace root), with no SHADOWTAB_* setting in the environment."""
    for name in list(os.environ):
        if name.startswith("SHADOWTAB_"):
            monkeypatch.delenv(name)
    user = tmp_path / "cfg"
    workspace = tmp_path / "ws"
    user.mkdir()
    workspace.mkdir()
    monkeypatch.setenv("SHADOWTAB_CONFIG_DIR", str(user))
    return user, workspace


def test_defaults_without_any_file(config_dirs: tuple[Path, Path]) -> None:
    settings = load_settings(config_dirs[1])
    assert settings == Settings()
    assert settings.engine.kind == "llama.cpp"
    assert settings.engine.model_path is None
    assert settings.linters == {}
    specs = settings.linter_specs()
    assert specs["ruff"].output_format == "ruff-json"
    assert "python" in specs["ruff"].languages


def test_workspace_overrides_user_and_env_overrides_both(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    user, workspace = config_dirs
    (user / "shadowtab.toml").write_text(
        '[engine]\ncontext_size = 2048\nthreads = 2\nmodel_path = "/m/user.gguf"\n'
        "[debounce]\nlint_ms = 500\n"
    )
    (workspace / "shadowtab.toml").write_text(
        "[engine]\ncontext_size = 1024\n"
        '[linters.shellcheck]\ncommand = ["shellcheck", "-f", "gcc", "-"]\n'
        'output_format = "lines"\nlanguages = ["sh"]\nextensions = [".sh"]\ntimeout_s = 5\n'
        "[linters.ruff]\nenabled = false\n"
    )
    monkeypatch.setenv("SHADOWTAB_ENGINE_THREADS", "3")
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "off")
    settings = load_settings(workspace)
    assert settings.engine.context_size == 1024
    assert settings.engine.threads == 3
    assert settings.engine.model_path == "/m/user.gguf"
    assert settings.debounce.lint_ms == 500
    assert settings.engine.kind == "off"
    specs = settings.linter_specs()
    assert specs["shellcheck"].command == ["shellcheck", "-f", "gcc", "-"]
    assert specs["shellcheck"].extensions == (".sh",)
    assert specs["shellcheck"].timeout_s == 5
    assert "ruff" not in specs
    assert "python-syntax" in specs
    assert settings.sources == (
        str(user / "shadowtab.toml"),
        str(workspace / "shadowtab.toml"),
        "SHADOWTAB_ENGINE_KIND",
        "SHADOWTAB_ENGINE_THREADS",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[engine]\ncontext_sise = 10\n", "unknown key 'engine.context_sise'"),
        ('[engine]\ncontext_size = "big"\n', "key 'engine.context_size': expected an integer"),
        ("[engine]\nthreads = true\n", "key 'engine.threads': expected an integer, got bool"),
        ("[engine]\nthreads = 0\n", "key 'engine.threads': expected an integer >= 1"),
        (
            '[engine]\nkind = "gpt"\n',
            "key 'engine.kind': expected one of 'llama.cpp', 'torch', 'openai', 'off'",
        ),
        ("[engine]\nmodel_path = 3\n", "key 'engine.model_path': expected a string"),
        ("[debounce]\nlint_ms = -1\n", "key 'debounce.lint_ms': expected an integer >= 0"),
        ("[models]\nx = 1\n", "unknown section [models]"),
        ("engine = 3\n", "'engine' must be a table"),
        ("[linters.go]\ncommand = 'golint'\noutput_format = 'lines'\n", "'linters.go.command'"),
        ("[linters.go]\ncommand = ['golint']\n", "'linters.go' is missing the key 'output_format'"),
        ("[linters.go]\ncommand = ['golint']\noutput_format = 'xml'\n", "unknown output_format"),
        ("[linters.go]\noutput_format = 'lines'\n", "[linters.go]': linter go: a command"),
        ("[linters.go]\nenabled = 'no'\n", "key 'linters.go.enabled': expected true or false"),
        ("[linters.go]\ncommand = ['a']\noutput_format = 'x'\nargs = 1\n", "'linters.go.args'"),
        ("[engine\n", "not valid TOML"),
    ],
)
def test_bad_file_names_key_and_file(
    config_dirs: tuple[Path, Path], content: str, message: str
) -> None:
    workspace = config_dirs[1]
    path = workspace / "shadowtab.toml"
    path.write_text(content)
    with pytest.raises(ConfigError) as raised:
        load_settings(workspace)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_bad_user_file_is_named(config_dirs: tuple[Path, Path]) -> None:
    user, workspace = config_dirs
    (user / "shadowtab.toml").write_text("[engine]\nkv_cache_mb = 1.5\n")
    with pytest.raises(ConfigError, match=r"cfg/shadowtab.toml: key 'engine.kv_cache_mb'"):
        load_settings(workspace)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "SHADOWTAB_ENGINE_CONTEXT_SIZE",
            "lots",
            "environment variable SHADOWTAB_ENGINE_CONTEXT_SIZE: key ",
        ),
        ("SHADOWTAB_ENGINE_KIND", "torch!", "SHADOWTAB_ENGINE_KIND: key 'engine.kind'"),
        ("SHADOWTAB_KIND", "torch!", "SHADOWTAB_KIND: key 'engine.kind'"),  # an old name
        (
            "SHADOWTAB_ENGINE_KV_CACHE_MB",
            "0",
            "SHADOWTAB_ENGINE_KV_CACHE_MB: key 'engine.kv_cache_mb'",
        ),
        ("SHADOWTAB_MODLE_PATH", "/x", "environment variable SHADOWTAB_MODLE_PATH: unknown"),
    ],
)
def test_bad_environment_names_the_variable(
    config_dirs: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_settings(config_dirs[1])


def test_dir_variables_are_not_settings(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("RUNTIME", "STATE", "DATA"):
        monkeypatch.setenv(f"SHADOWTAB_{name}_DIR", str(tmp_path / name))
    assert load_settings(config_dirs[1]).sources == ()


def test_settings_convert_to_the_contract_types(
    config_dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    pytest.importorskip("shadowtab.lsp.hub")
    inference = pytest.importorskip("shadowtab.inference")
    if not hasattr(inference, "EngineOptions"):
        pytest.skip("shadowtab.inference.EngineOptions has not landed yet")
    settings = Settings(
        engine=EngineOptions(kind="off", context_size=2048, threads=2, kv_cache_mb=64)
    )
    options = settings.hub_options(tmp_path / "state", tmp_path / "data")
    assert options.state_dir == tmp_path / "state"
    assert options.engine.kind == "off"
    assert options.engine.context_size == 2048
    assert options.engine.threads == 2
    assert options.engine.kv_cache_mb == 64
    assert options.engine.data_dir == tmp_path / "data"
    assert options.debounce == settings.debounce and options.limits == settings.limits
    assert list(options.linters["ruff"].command)[:2] == ["ruff", "check"]


def test_torch_and_openai_engine_settings(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    (workspace / "shadowtab.toml").write_text(
        '[engine]\nkind = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\n'
        'model = "smollm2"\ntimeout_s = 5\napi_key = "sk-from-file"\n'
    )
    monkeypatch.setenv("SHADOWTAB_ENGINE_API_KEY", "sk-from-env")
    settings = load_settings(workspace)
    options = settings.engine_options(Path("/data"))
    assert options.kind == "openai" and options.base_url == "http://127.0.0.1:8000/v1"
    assert options.model == "smollm2" and options.timeout_s == 5
    assert options.api_key == "sk-from-env"  # the environment wins
    shown = f"{settings.describe()} {settings!r} {options!r}"
    assert "sk-from" not in shown and settings.describe()["engine"]["api_key"] == "set"
    (workspace / "shadowtab.toml").write_text(
        '[engine]\nkind = "torch"\ndevice = "cuda:0"\nadapter = "/adapters/ne"\n'
    )
    monkeypatch.delenv("SHADOWTAB_ENGINE_API_KEY")
    torch_settings = load_settings(workspace)
    torch_options = torch_settings.engine_options()
    assert torch_options.kind == "torch" and torch_options.device == "cuda:0"
    assert torch_options.adapter == torch_options.adapter_path == "/adapters/ne"
    assert torch_settings.deprecations == ()


def test_the_served_adapters_format_reaches_the_engine_options(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    assert load_settings(workspace).engine_options().adapter_format is None
    (workspace / "shadowtab.toml").write_text(
        '[engine]\nkind = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\n'
        'model = "next-edit"\nadapter_format = "shadowtab"\n'
    )
    settings = load_settings(workspace)
    assert settings.engine_options().adapter_format == "shadowtab"
    assert settings.describe()["engine"]["adapter_format"] == "shadowtab"
    monkeypatch.setenv("SHADOWTAB_ENGINE_ADAPTER_FORMAT", "zeta")  # the environment wins
    assert load_settings(workspace).engine_options().adapter_format == "zeta"


def test_the_old_adapter_path_key_still_works_and_says_so(
    config_dirs: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    _, workspace = config_dirs
    (workspace / "shadowtab.toml").write_text('[engine]\nadapter_path = "/adapters/ne"\n')
    with caplog.at_level("WARNING"):
        settings = load_settings(workspace)
    assert settings.engine_options().adapter == "/adapters/ne"
    assert "engine.adapter_path is deprecated" in caplog.text
    assert settings.describe()["deprecations"] == list(settings.deprecations)
    (workspace / "shadowtab.toml").write_text(
        '[engine]\nadapter_path = "/adapters/old"\nadapter = "none"\n'
    )
    both = load_settings(workspace)
    assert both.engine_options().adapter == "none" and "ignored" in both.deprecations[0]


def test_the_engine_runs_in_a_worker_unless_set_inline(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    assert load_settings(workspace).engine_options().process == "worker"
    (workspace / "shadowtab.toml").write_text('[engine]\nprocess = "inline"\n')
    assert load_settings(workspace).engine_options().process == "inline"
    monkeypatch.setenv("SHADOWTAB_ENGINE_PROCESS", "worker")  # the environment wins
    settings = load_settings(workspace)
    assert settings.engine_options().process == "worker"
    assert settings.describe()["engine"]["process"] == "worker"


def test_the_weight_type_is_measured_unless_pinned(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    assert load_settings(workspace).engine_options().weights == "auto"  # measured per CPU
    (workspace / "shadowtab.toml").write_text('[engine]\nweights = "bf16"\n')
    assert load_settings(workspace).engine_options().weights == "bf16"
    monkeypatch.setenv("SHADOWTAB_ENGINE_WEIGHTS", "as-is")
    settings = load_settings(workspace)
    assert settings.engine_options().weights == "as-is"
    assert settings.describe()["engine"]["weights"] == "as-is"


def test_the_kv_type_reaches_the_engine_options(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    default = load_settings(workspace)
    assert default.engine_options().kv_type == default.engine.kv_type == EngineOptions.kv_type
    (workspace / "shadowtab.toml").write_text('[engine]\nkv_type = "q8_0"\n')
    assert load_settings(workspace).engine_options().kv_type == "q8_0"
    monkeypatch.setenv("SHADOWTAB_ENGINE_KV_TYPE", "f16")  # the environment wins
    settings = load_settings(workspace)
    assert settings.engine_options().kv_type == "f16"
    assert settings.describe()["engine"]["kv_type"] == "f16"
    monkeypatch.setenv("SHADOWTAB_ENGINE_KV_TYPE", "fp8")
    with pytest.raises(
        ConfigError, match=r"SHADOWTAB_ENGINE_KV_TYPE.*engine\.kv_type.*'f16', 'q8_0'"
    ):
        load_settings(workspace)


def test_merge_adapter_is_on_unless_turned_off(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = config_dirs[1]
    assert load_settings(workspace).engine_options().merge_adapter is True
    (workspace / "shadowtab.toml").write_text("[engine]\nmerge_adapter = false\n")
    settings = load_settings(workspace)
    assert settings.engine_options().merge_adapter is False
    assert settings.describe()["engine"]["merge_adapter"] is False
    monkeypatch.setenv("SHADOWTAB_ENGINE_MERGE_ADAPTER", "1")  # the environment wins
    assert load_settings(workspace).engine_options().merge_adapter is True
    monkeypatch.setenv("SHADOWTAB_ENGINE_MERGE_ADAPTER", "maybe")
    with pytest.raises(ConfigError, match=r"SHADOWTAB_ENGINE_MERGE_ADAPTER.*true or false"):
        load_settings(workspace)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('kind = "vllm"', "engine.kind"),
        ('base_url = "localhost:8000"', "http"),
        ('device = "tpu"', "cuda"),
        ('api_key = ""', "non-empty"),
        ('process = "thread"', "engine.process.*'worker', 'inline'"),
        ('weights = "q5_k"', "engine.weights.*'q8_0', 'bf16'"),
        ('kv_type = "q4_0"', "engine.kv_type.*'f16', 'q8_0'"),
        ("kv_type = 8", "engine.kv_type.*got int 8"),
        ('merge_adapter = "yes"', "engine.merge_adapter.*true or false"),
        ('adapter_format = "auto"', "engine.adapter_format.*'shadowtab'"),
    ],
)
def test_bad_engine_settings_name_the_key(
    config_dirs: tuple[Path, Path], line: str, message: str
) -> None:
    workspace = config_dirs[1]
    (workspace / "shadowtab.toml").write_text(f"[engine]\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        load_settings(workspace)


def test_the_token_threshold_reaches_the_predictor(
    config_dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    """[next_edit] token_threshold: its default is the predictor's own, a file sets it,
    it reaches the hub's predictor and `daemon status`, and a bad one is named."""
    from shadowtab.inference.next_edit.token_confidence import DEFAULT_TOKEN_THRESHOLD
    from shadowtab.lsp.engine_host import EngineHost

    assert Settings().next_edit.token_threshold == DEFAULT_TOKEN_THRESHOLD
    workspace = config_dirs[1]
    (workspace / "shadowtab.toml").write_text("[next_edit]\ntoken_threshold = 0.6\n")
    settings = load_settings(workspace)
    assert settings.next_edit.token_threshold == 0.6
    assert settings.describe()["next_edit"]["token_threshold"] == 0.6
    options = settings.hub_options(tmp_path / "state", tmp_path / "data")
    assert options.next_edit.token_threshold == 0.6
    host = EngineHost(options.engine, options.next_edit)
    predictor = host.predictor
    assert predictor is not None and predictor.model.token_threshold == 0.6  # type: ignore[attr-defined]
    (workspace / "shadowtab.toml").write_text("[next_edit]\ntoken_threshold = 1.2\n")
    with pytest.raises(ConfigError, match=r"'next_edit\.token_threshold': expected a number"):
        load_settings(workspace)


def test_an_old_variable_name_still_works_and_says_so(
    config_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable renamed to SHADOWTAB_<SECTION>_<NAME> is still read under its old names
    (SHADOWTAB_<NAME>, and the ones before it), with a deprecation line; the new name wins
    when both are set, and the newer of two old names."""
    workspace = config_dirs[1]
    monkeypatch.setenv("SHADOWTAB_KIND", "off")
    monkeypatch.setenv("SHADOWTAB_LINT_DEBOUNCE_MS", "70")
    monkeypatch.setenv("SHADOWTAB_GATE", "0")
    settings = load_settings(workspace)
    assert settings.engine.kind == "off" and settings.debounce.lint_ms == 70
    assert settings.next_edit.gate is False
    assert set(settings.deprecations) == {
        "SHADOWTAB_KIND is deprecated: it is read as SHADOWTAB_ENGINE_KIND; rename it",
        "SHADOWTAB_LINT_DEBOUNCE_MS is deprecated: it is read as SHADOWTAB_DEBOUNCE_LINT_MS; "
        "rename it",
        "SHADOWTAB_GATE is deprecated: it is read as SHADOWTAB_NEXT_EDIT_GATE; rename it",
    }
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "torch")
    monkeypatch.setenv("SHADOWTAB_LINT_MS", "80")
    both = load_settings(workspace)
    assert both.engine.kind == "torch" and both.debounce.lint_ms == 80
    assert "SHADOWTAB_KIND is deprecated and ignored: SHADOWTAB_ENGINE_KIND is set" in (
        both.deprecations
    )
    assert "SHADOWTAB_LINT_DEBOUNCE_MS is deprecated and ignored: SHADOWTAB_LINT_MS is set" in (
        both.deprecations
    )
    monkeypatch.setenv("SHADOWTAB_ADAPTER_PATH", "/adapters/old")  # a deprecated key's
    old_key = load_settings(workspace)
    assert old_key.engine_options().adapter == "/adapters/old"
    assert (
        "SHADOWTAB_ADAPTER_PATH is deprecated: it is read as SHADOWTAB_ENGINE_ADAPTER; "
        "rename it" in old_key.deprecations
    )
