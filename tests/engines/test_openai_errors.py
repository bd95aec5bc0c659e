"""OpenAIEngine's error paths against a scripted loopback server: each failure is a clear
EngineError naming the setting to change, idempotent failures are retried with backoff,
and the API key never shows up in an error, the stats or a repr."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from fake_openai_server import Script, fake_server
from shadowtab.inference import Cancelled, EngineError, ModelLoadError
from shadowtab.inference.engines.openai.client import ServerOptions
from shadowtab.inference.engines.openai.engine import OpenAIEngine

FAST = {"retries": 2, "backoff_s": 0.01, "timeout_s": 2.0}


def engine_for(url: str, **overrides: object) -> OpenAIEngine:
    options = {**FAST, **overrides}
    return OpenAIEngine(ServerOptions(base_url=url, **options))  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_streams_collects_and_reports_server_usage() -> None:
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    script = Script(usage=usage)
    with fake_server(script) as url:
        engine = engine_for(url)
        result = engine.complete("some prompt", 8, stop=["\n\n"])
        assert result.texts == ["hello world"]
        assert result.stats.prompt_tokens == 40 and result.stats.reused_prompt_tokens == 32
        assert result.stats.evaluated_prompt_tokens == 8
        body = script.bodies[0]
        assert body["model"] == "tiny" and body["temperature"] == 0 and body["stream"] is True
        assert body["cache_prompt"] is True and "stop" not in body  # matched here
        assert body["logprobs"] == 1
        assert engine.stats()["totals"]["cached_share"] == pytest.approx(0.8)
        engine.close()


def test_finish_reasons_tell_the_end_token_from_a_stop_string() -> None:
    """OpenAI's "stop" is the end token unless a stop string matched; llama-cpp-python
    never says which, so stop strings are matched on the streamed text."""
    script = Script(pieces=["a = 1", "\n\n", "b = 2"])
    with fake_server(script) as url:
        engine = engine_for(url)
        ended = engine.complete("p", 8)
        assert ended.texts == ["a = 1\n\nb = 2"] and ended.finish_reasons == ["eos"]
        assert ended.logprobs == [[-0.5] * 3] and ended.text_offsets == [[5, 7, 12]]
        stopped = engine.complete("p", 8, stop=["\n\n"])
        assert stopped.texts == ["a = 1"] and stopped.finish_reasons == ["stop"]
        assert stopped.text_offsets == [[5, 5]] and len(stopped.logprobs[0]) == 2
        assert "stop" not in script.bodies[1]
        assert engine.complete("p", 2).finish_reasons == ["eos"]  # the script says "stop"
        engine.close()


def test_a_server_that_names_its_stop_gets_the_stop_strings() -> None:
    script = Script(pieces=["a = 1", "\n\n", "b = 2"], report_stop=True)
    with fake_server(script) as url:
        engine = engine_for(url)
        assert engine.complete("p", 8).finish_reasons == ["eos"]  # stop_reason: null
        stopped = engine.complete("p", 8, stop=["\n\n"])
        assert script.bodies[1]["stop"] == ["\n\n"]
        assert stopped.texts == ["a = 1"] and stopped.finish_reasons == ["stop"]
        assert stopped.text_offsets == [[5]]
        assert engine.stats()["server_stops"] is True
        engine.close()


def test_logprobs_refused_are_not_asked_for_again() -> None:
    script = Script(refuse_field="logprobs")
    with fake_server(script) as url:
        engine = engine_for(url)
        result = engine.complete("p", 8)
        assert result.texts == ["hello world"] and result.logprobs == [[]]
        assert "logprobs" not in script.bodies[-1] and engine.stats()["logprobs"] is False
        engine.close()


def test_the_draft_goes_out_as_prediction_and_is_dropped_when_refused() -> None:
    script = Script(refuse_field="prediction")
    with fake_server(script) as url:
        engine = engine_for(url)
        assert engine.rewrite("p", "the draft", 8).texts == ["hello world"]
        assert script.bodies[0]["prediction"] == {"type": "content", "content": "the draft"}
        assert "prediction" not in script.bodies[1]
        engine.rewrite("p", "the draft", 8)
        assert "prediction" not in script.bodies[2]  # remembered: no second refusal
        engine.close()


def test_server_down() -> None:
    with pytest.raises(ModelLoadError, match=r"cannot connect.*engine\.base_url"):
        engine_for(f"http://127.0.0.1:{free_port()}/v1")


def test_not_an_http_url() -> None:
    with pytest.raises(ModelLoadError, match=r"engine\.base_url"):
        engine_for("localhost:8000")


def test_slow_server_times_out_with_the_setting_named() -> None:
    script = Script(delay_s=1.5)
    with fake_server(script) as url:
        engine = engine_for(url, timeout_s=0.3, retries=1)
        started = time.perf_counter()
        with pytest.raises(EngineError, match=r"engine\.timeout_s"):
            engine.complete("p", 4)
        assert time.perf_counter() - started < 3.0
        assert len(script.bodies) == 2  # retried once
        engine.close()


def test_http_500_is_retried_with_backoff_then_reported() -> None:
    script = Script(fail_status=500)
    with fake_server(script) as url:
        engine = engine_for(url)
        with pytest.raises(EngineError, match="HTTP 500"):
            engine.complete("p", 4)
        assert len(script.bodies) == 3  # one try and two retries
        script.fail_times = 1
        assert engine.complete("p", 4).texts == ["hello world"]  # recovered on the retry
        engine.close()


def test_malformed_json_names_the_url_setting() -> None:
    script = Script(models_body=b"<html>a web page, not an API</html>")
    with fake_server(script) as url, pytest.raises(ModelLoadError, match=r"engine\.base_url"):
        engine_for(url)
    script = Script(models_body=b'{"unexpected": true}')
    with fake_server(script) as url, pytest.raises(ModelLoadError, match="OpenAI model list"):
        engine_for(url)


def test_stream_cut_in_the_middle() -> None:
    script = Script(cut_after=1)
    with fake_server(script) as url:
        engine = engine_for(url)
        with pytest.raises(EngineError, match="cut in the middle"):
            engine.complete("p", 8)
        assert len(script.bodies) == 3  # nobody saw the text yet: retried from scratch
        engine.close()


def test_unknown_model() -> None:
    with fake_server(Script(models=["served-a", "served-b"])) as url:
        with pytest.raises(ModelLoadError, match=r"'nope' \(engine\.model\).*served-a"):
            engine_for(url, model="nope")
        assert engine_for(url).model == "served-a"  # unset: the server's first


def test_wrong_key_is_refused_and_never_shown() -> None:
    secret = "sk-right-key-123"
    wrong = "sk-wrong-key-456"
    with fake_server(Script(api_key=secret)) as url:
        with pytest.raises(ModelLoadError, match=r"engine\.api_key") as caught:
            engine_for(url, api_key=wrong)
        assert wrong not in str(caught.value)
        engine = engine_for(url, api_key=secret)
        assert engine.complete("p", 4).texts == ["hello world"]
        shown = f"{engine.stats()} {engine.options!r} {engine.options}"
        assert secret not in shown and engine.stats()["api_key"] == "set"
        engine.close()


def test_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHADOWTAB_ENGINE_API_KEY", "sk-env")
    with fake_server(Script(api_key="sk-env")) as url:
        engine_for(url).close()


def test_cancel_returns_at_once_and_closes_the_stream() -> None:
    script = Script(pieces=["x"] * 200, event_gap_s=0.05)
    with fake_server(script) as url:
        engine = engine_for(url)
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        started = time.perf_counter()
        with pytest.raises(Cancelled):
            engine.complete("p", 200, cancel=cancel)
        assert time.perf_counter() - started < 1.0
        assert script.disconnected.wait(3.0)  # the server saw the stream closed
        engine.close()


def test_bad_requests_fail_before_any_http() -> None:
    script = Script()
    with fake_server(script) as url:
        engine = engine_for(url)
        with pytest.raises(EngineError, match="empty draft"):
            engine.rewrite("p", "", 8)
        with pytest.raises(EngineError, match="empty prompt"):
            engine.complete("", 8)
        with pytest.raises(EngineError, match="n must be between"):
            engine.complete("p", 8, n=9)
        assert script.bodies == []
        engine.close()


def test_min_token_p_ends_the_answer_before_the_first_unsure_token() -> None:
    """Ghost text's cut on a server: the stream is closed at the first token less
    likely than min_token_p, and the answer keeps what came before it."""
    script = Script(pieces=["x = ", "compute", "(a)"], piece_logprobs=[-0.01, -0.05, -1.5])
    with fake_server(script) as url:
        engine = engine_for(url)
        result = engine.complete("p", 8, min_token_p=0.5)
        assert result.texts == ["x = compute"] and result.finish_reasons == ["unsure"]
        assert len(result.logprobs[0]) == 2 and result.text_offsets == [[4, 11]]
        assert engine.complete("p", 8).texts == ["x = compute(a)"]  # no cut by default
        engine.close()


def test_min_token_p_without_logprobs_leaves_the_answer_uncut() -> None:
    """A server that refuses logprobs: nothing to cut by, and the answer says it carries
    no probabilities (empty logprobs) rather than pretending it is sure."""
    script = Script(refuse_field="logprobs", piece_logprobs=[-3.0, -3.0, -3.0])
    with fake_server(script) as url:
        engine = engine_for(url)
        result = engine.complete("p", 8, min_token_p=0.9)
        assert result.texts == ["hello world"] and result.logprobs == [[]]
        assert result.finish_reasons != ["unsure"]
        with pytest.raises(EngineError, match="min_token_p"):
            engine.complete("p", 8, min_token_p=1.5)
        engine.close()
