"""engine.weights = "auto": the weight type measured fastest for a next edit on this CPU,
measured once per CPU and kept in the data dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from shadowtab.inference import LlamaCppEngine, default_model_path
from shadowtab.inference.engines.llama_cpp import weight_choice
from shadowtab.inference.engines.llama_cpp.weight_choice import (
    CHOICE_FILE,
    WeightChoice,
    WeightTiming,
    built_kernels,
    choose_weights,
    cpu_signature,
    load_choice,
    save_choice,
    saved_curve,
)

CPU = "model name\t: Some CPU\nflags\t\t: sse avx2 fma\nphysical id\t: 0\ncore id\t\t: 0\n"


def timing(weights: str, step_s: float, pass_128_s: float) -> WeightTiming:
    passes = {9: 3 * step_s, 17: 5 * step_s, 33: 8 * step_s, 64: 12 * step_s}
    return WeightTiming(weights, step_s, {**passes, 128: pass_128_s})


def test_the_cpu_signature_follows_the_model_and_the_flags() -> None:
    same_flags_reordered = CPU.replace("sse avx2 fma", "fma sse avx2")
    assert cpu_signature(CPU) == cpu_signature(same_flags_reordered)
    assert cpu_signature(CPU) != cpu_signature(CPU.replace("avx2", "avx512_bf16"))
    assert cpu_signature(CPU) != cpu_signature(CPU.replace("Some CPU", "Other CPU"))
    # the same CPU with a llama.cpp built without AVX-512 kernels: measured again
    avx512 = "CPU : AVX2 = 1 | AVX512 = 1 | LLAMAFILE = 1"
    assert cpu_signature(CPU, avx512) != cpu_signature(CPU, avx512.replace("AVX512 = 1 | ", ""))
    assert cpu_signature(CPU) == cpu_signature(CPU, built_kernels())
    assert built_kernels().startswith("CPU")


def test_faster_passes_make_the_expected_next_edit_shorter() -> None:
    slow, fast = timing("q8_0", 0.01, 0.30), timing("bf16", 0.01, 0.15)
    assert fast.expected_next_edit_s() < slow.expected_next_edit_s()
    assert fast.cost_curve()[0] == (1, 1.0)
    assert dict(fast.cost_curve())[128] == pytest.approx(15.0)


def test_a_choice_is_kept_for_its_cpu_only(tmp_path: Path) -> None:
    path = tmp_path / CHOICE_FILE
    choice = WeightChoice("bf16", "cpu-a", (timing("q8_0", 0.01, 0.3), timing("bf16", 0.01, 0.2)))
    save_choice(path, choice)
    loaded = load_choice(path, "cpu-a")
    assert loaded is not None and loaded.weights == "bf16" and not loaded.measured_now
    assert loaded.timings == choice.timings
    assert load_choice(path, "cpu-b") is None  # another CPU: measure again
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, "prompt_tokens": weight_choice.PROMPT // 4}))
    assert load_choice(path, "cpu-a") is None  # timed after another prompt: again
    path.write_text("{not json")
    assert load_choice(path, "cpu-a") is None  # unreadable: measure again, never fail


def test_a_type_set_by_hand_drafts_by_the_costs_auto_measured_for_it(tmp_path: Path) -> None:
    assert saved_curve(tmp_path, "q8_0") is None  # nothing measured: the built-in curve
    q8, bf16 = timing("q8_0", 0.01, 0.3), timing("bf16", 0.02, 0.2)
    save_choice(tmp_path / CHOICE_FILE, WeightChoice("bf16", cpu_signature(), (q8, bf16)))
    assert saved_curve(tmp_path, "q8_0") == q8.cost_curve()
    assert saved_curve(tmp_path, "f16") is None  # not a candidate then
    save_choice(tmp_path / CHOICE_FILE, WeightChoice("bf16", "another-cpu", (q8, bf16)))
    assert saved_curve(tmp_path, "q8_0") is None  # measured on another CPU


def test_a_measurement_on_a_busy_machine_is_measured_again_at_the_next_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other processes used a core while it measured: the choice serves, is marked
    provisional (and said so), and the next start measures again, MAX_ATTEMPTS in all."""
    measured: list[int] = []

    def fake_timings(paths: dict[str, Path], n_threads: int, _: Any = None) -> list[WeightTiming]:
        measured.append(1)
        return [timing("q8_0", 0.01, 0.3), timing("bf16", 0.01, 0.2)]

    monkeypatch.setattr(weight_choice, "requantize", lambda s, w, d, n: d / f"{w}.gguf")
    monkeypatch.setattr(weight_choice, "time_side_by_side", fake_timings)
    monkeypatch.setattr(weight_choice, "busy_now", lambda: 0.0)  # busy once timing began
    monkeypatch.setattr(weight_choice, "_busy_since", lambda before: 1.0)
    choices = [
        choose_weights(tmp_path / "model.gguf", tmp_path, 1, candidates=("q8_0", "bf16"))
        for _ in range(weight_choice.MAX_ATTEMPTS + 1)
    ]
    assert len(measured) == weight_choice.MAX_ATTEMPTS  # the last start read it back
    assert [c.provisional for c in choices] == [True, True, False, False]
    assert choices[0].describe()["provisional"] and choices[0].describe()["others_busy_cores"] == 1
    assert choices[-1].weights == "bf16" and not choices[-1].measured_now

    monkeypatch.setattr(weight_choice, "_busy_since", lambda before: 0.1)
    (tmp_path / CHOICE_FILE).unlink()
    quiet = choose_weights(tmp_path / "model.gguf", tmp_path, 1, candidates=("q8_0", "bf16"))
    assert not quiet.provisional and quiet.attempts == 1


def test_the_packaged_model_is_measured_once_then_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(weight_choice, "REPEATS", 1)
    monkeypatch.setattr(weight_choice, "busy_now", lambda: 0.0)
    monkeypatch.setattr(weight_choice, "_busy_since", lambda before: 0.0)  # a busy CI: kept
    first = choose_weights(default_model_path(), tmp_path, 1, candidates=("q8_0", "f16"))
    assert first.measured_now and first.weights in ("q8_0", "f16")
    assert {t.weights for t in first.timings} == {"q8_0", "f16"}
    saved = json.loads((tmp_path / CHOICE_FILE).read_text())
    assert saved["weights"] == first.weights and saved["cpu"] == cpu_signature()
    assert all(t.step_s > 0 and t.pass_s[128] > 0 for t in first.timings)

    again = choose_weights(default_model_path(), tmp_path, 1, candidates=("q8_0", "f16"))
    assert not again.measured_now and again.weights == first.weights
    assert "pass_cost_steps" in again.describe()


def test_a_busy_machine_defers_the_timing_to_a_later_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Others keep the cores busy before timing begins: nothing is timed, the fallback
    serves (converted), the choice says it was deferred, and nothing is saved."""
    converted: list[str] = []

    def fake_requantize(source: Path, weights: str, folder: Path, n: int) -> Path:
        converted.append(weights)
        return folder / f"{weights}.gguf"

    def no_timing(*args: Any) -> list[WeightTiming]:
        raise AssertionError("timed on a busy machine")

    monkeypatch.setattr(weight_choice, "requantize", fake_requantize)
    monkeypatch.setattr(weight_choice, "time_side_by_side", no_timing)
    monkeypatch.setattr(weight_choice, "busy_now", lambda: 1.5)
    choice = choose_weights(tmp_path / "model.gguf", tmp_path, 1, candidates=("q8_0", "bf16"))
    assert choice.weights == weight_choice.FALLBACK and converted == [weight_choice.FALLBACK]
    assert choice.deferred and choice.provisional and choice.describe()["deferred"]
    assert not (tmp_path / CHOICE_FILE).exists()


def test_an_engine_with_auto_weights_loads_the_measured_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(weight_choice, "busy_now", lambda: 0.0)  # a busy CI still measures
    monkeypatch.setattr(weight_choice, "REPEATS", 1)
    monkeypatch.setattr(weight_choice, "CANDIDATES", ("q8_0", "f16"))
    engine = LlamaCppEngine(
        n_ctx=512, kv_cache_mb=16, data_dir=tmp_path, requantize_to="auto", merge_adapter=False
    )
    try:
        stats = engine.stats()
        assert stats["weights"] in ("q8_0", "f16")
        assert stats["weights_choice"]["choice"] == stats["weights"]
        assert f"requant-{stats['weights']}" in engine.loaded_model_path.name
        measured = dict(engine._draft_policy().cost_curve)  # draft lengths follow it
        assert set(measured) == {1, *weight_choice.PASS_SIZES}
        assert engine.rewrite("def f():\n", "    return 1\n", 8).texts[0]
    finally:
        engine.close()
