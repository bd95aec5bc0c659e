"""Slow: OpenAIEngine against a real vLLM server (CPU build, its own venv made by
scripts/build_vllm_venv.sh) on the packaged model, converted to a Hugging Face directory
by the torch engine, with the packaged adapter as a LoRA module (the peft directory
`shadowtab adapter export-peft` writes). Skipped, saying why, when that venv is absent."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from adapter_prompts import copy_prompt, similarity, typing_prompt
from inference_samples import FIB, long_code
from server_helpers import free_port, serving
from shadowtab.daemon.cli.main import main as cli_main
from shadowtab.inference import Cancelled

if TYPE_CHECKING:
    from shadowtab.inference.engines.openai.engine import OpenAIEngine
    from shadowtab.inference.engines.torch.engine import TorchEngine

# vLLM's CPU backend takes minutes to start (5+ on 2 shared cores): above pytest's 300 s
pytestmark = pytest.mark.timeout(1800)
REPO = Path(__file__).resolve().parents[2]
LORA_NAME = "next-edit"
VLLM_VENV = Path(os.environ.get("SHADOWTAB_VLLM_VENV", REPO / ".venv-vllm"))


@pytest.fixture(scope="module")
def vllm_url(request: pytest.FixtureRequest) -> Iterator[str]:
    python = VLLM_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no vLLM venv at {VLLM_VENV}: build it with scripts/build_vllm_venv.sh")
    torch_engine: TorchEngine = request.getfixturevalue("torch_engine")  # the HF directory
    tmp_path_factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    lora = tmp_path_factory.mktemp("vllm-lora") / "next-edit"
    assert cli_main(["adapter", "export-peft", str(lora)]) == 0
    port = free_port()
    command = [
        str(python), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(torch_engine.loaded_model_path), "--served-model-name", "smollm2",
        "--enable-lora", "--lora-modules", f"{LORA_NAME}={lora}", "--max-lora-rank", "8",
        "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "2048",
        "--dtype", "float32", "--enable-prefix-caching", "--enable-prompt-tokens-details",
        # the CPU backend reserves this share of the machine's memory for its KV cache and
        # refuses to start when less is free (its default, 0.92, never is beside a test run)
        "--gpu-memory-utilization", "0.3",
    ]  # fmt: skip
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    with serving(command, port, log, start_s=900, stop_s=30) as url:
        yield url


@pytest.fixture(scope="module")
def vllm_engine(vllm_url: str) -> Iterator[OpenAIEngine]:
    from shadowtab.inference.engines.openai.client import ServerOptions
    from shadowtab.inference.engines.openai.engine import OpenAIEngine

    engine = OpenAIEngine(ServerOptions(base_url=vllm_url, model="smollm2", timeout_s=300))
    yield engine
    engine.close()


def test_vllm_reports_its_prefix_cache_hits(vllm_engine: OpenAIEngine) -> None:
    base = "# vllm prefix\n" + long_code(1200)
    first = vllm_engine.complete(base, 2)
    second = vllm_engine.complete(base + "def main():\n    ", 2)
    assert first.stats.prompt_tokens > 200
    # whole cache blocks only: 16 tokens on a GPU, 128 on the CPU backend (256 of 380 here)
    assert second.stats.reused_prompt_tokens >= 128 * (first.stats.prompt_tokens // 128)
    assert vllm_engine.stats()["totals"]["cache_reports"] >= 2


def test_vllm_rewrite_candidates_cancel(vllm_engine: OpenAIEngine) -> None:
    plain = vllm_engine.rewrite(FIB, "x", 24, speculative=False)
    assert vllm_engine.rewrite(FIB, plain.texts[0], 24).texts == plain.texts
    many = vllm_engine.complete(FIB, 8, n=3)
    assert many.texts[0] == vllm_engine.complete(FIB, 8).texts[0] and len(many.texts) >= 2
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with pytest.raises(Cancelled):
        vllm_engine.complete(FIB, 1000, cancel=cancel)


def test_vllm_serves_the_packaged_adapter(vllm_url: str, torch_engine: TorchEngine) -> None:
    """The LoRA module answers as the torch engine with the packaged adapter (both float32
    on the same weights; vLLM's kernels may break a near tie otherwise)."""
    from shadowtab.inference.engines.openai.client import ServerOptions
    from shadowtab.inference.engines.openai.engine import OpenAIEngine

    tuned = OpenAIEngine(ServerOptions(base_url=vllm_url, model=LORA_NAME, timeout_s=300),
                         adapter_format="shadowtab")  # fmt: skip
    base = OpenAIEngine(ServerOptions(base_url=vllm_url, model="smollm2", timeout_s=300))
    try:
        assert "LoRA adapter on smollm2" in tuned.stats()["adapter"]
        assert tuned.stats()["adapter_format"] == "shadowtab"
        for rendered, stop in (typing_prompt(), copy_prompt()):
            ours = torch_engine.rewrite(
                rendered.prompt, "x", 24, stop=list(stop), speculative=False
            )
            served = tuned.complete(rendered.prompt, 24, stop=list(stop)).texts[0]
            print(f"vLLM LoRA ~ torch adapter: {similarity(served, ours.texts[0]):.3f}")
            assert similarity(served, ours.texts[0]) >= 0.9, (served, ours.texts[0])
        rendered, stop = typing_prompt()
        assert base.complete(rendered.prompt, 24).texts != tuned.complete(rendered.prompt, 24).texts
    finally:
        tuned.close()
        base.close()
