"""The control socket under bad input, against a live daemon: each bad client gets an
error reply or a closed connection, and the daemon keeps serving everyone else."""

from __future__ import annotations

import os
import socket
import stat
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from daemon_helpers import DaemonEnv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shadowtab.daemon.client import ControlError, DaemonNotRunning, request
from shadowtab.daemon.control_protocol import MAX_FRAME_BYTES, encode_frame

READ_TIMEOUT_S = 5.0  # control_server.DEFAULT_READ_TIMEOUT_S


def _connect(path: str, timeout: float = 10.0) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(path)
    return sock


def _read_reply(sock: socket.socket) -> dict[str, Any] | None:
    """The next reply, or None when the daemon closed the connection."""
    header = _recv(sock, 4)
    if header is None:
        return None
    (length,) = struct.unpack(">I", header)
    body = _recv(sock, length)
    assert body is not None
    reply = msgpack.unpackb(body)
    assert isinstance(reply, dict)
    return reply


def _recv(sock: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        try:
            chunk = sock.recv(count - len(data))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def _still_serving(pid: int) -> None:
    assert request("status", timeout=10)["pid"] == pid


def test_status_and_stats_replies(running_daemon: dict[str, Any]) -> None:
    status = request("status")
    assert status["ok"] is True
    assert status["pid"] == running_daemon["pid"]
    assert status["uptime_s"] >= 0
    assert status["engine"]["state"] in {"starting", "off"}
    census = status["threads"]  # the daemon's threads by kind (thread_census)
    assert census["own"] >= 1 and census["total"] == (
        census["own"] + census["pool_workers"] + census["child_waits"]
    )
    stats = request("stats")
    assert stats["daemon"]["pid"] == running_daemon["pid"]
    assert "allocations" not in stats  # traced only with PYTHONTRACEMALLOC


def test_a_daemon_tracing_its_allocations_says_where_its_memory_is_held(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a leak hunt (tests/torture's workday --trace-memory): the lines holding the
    most memory, largest first."""
    from shadowtab.daemon.client import start_daemon

    monkeypatch.setenv("PYTHONTRACEMALLOC", "1")
    daemon_env.seen_pids.add(start_daemon(timeout=30.0)["pid"])
    held = request("stats")["allocations"]
    assert len(held) > 10 and all(site["where"].rpartition(":")[2].isdigit() for site in held)
    assert any(site["where"].partition(":")[0].endswith(".py") for site in held)
    sizes = [site["kb"] for site in held]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 0


def test_engine_off_reaches_state_off(running_daemon: dict[str, Any]) -> None:
    deadline = time.monotonic() + 30
    while (state := request("status")["engine"]["state"]) == "starting":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert state == "off", request("status")["engine"]
    assert request("status")["hub"]["sessions"] == 0


def test_frame_over_16_mib_is_refused_and_closed(running_daemon: dict[str, Any]) -> None:
    with _connect(running_daemon["control_socket"]) as sock:
        sock.sendall(struct.pack(">I", MAX_FRAME_BYTES + 1) + b"\x00" * 65536)
        reply = _read_reply(sock)
        assert reply is not None and reply["ok"] is False
        assert "over the 16777216-byte limit" in reply["error"]
        assert _read_reply(sock) is None  # the stream cannot be resynchronised
    _still_serving(running_daemon["pid"])


def test_a_frame_of_exactly_16_mib_is_read(running_daemon: dict[str, Any]) -> None:
    filler = b"x" * (MAX_FRAME_BYTES - 64)
    body = msgpack.packb({"cmd": "status", "pad": filler})
    body = msgpack.packb({"cmd": "status", "pad": filler + b"x" * (MAX_FRAME_BYTES - len(body))})
    assert len(body) == MAX_FRAME_BYTES
    with _connect(running_daemon["control_socket"], timeout=30) as sock:
        sock.sendall(_frame(body))
        reply = _read_reply(sock)
    assert reply is not None and reply["ok"] is True


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"\xc1", "not valid msgpack"),
        (b"\x92\x01", "not valid msgpack"),  # an array of 2 with one item
        (msgpack.packb([1, 2]), "must be a msgpack map, got list"),
        (msgpack.packb("status"), "must be a msgpack map, got str"),
        (msgpack.packb({"command": "status"}), "request needs a string 'cmd'"),
        (msgpack.packb({"cmd": 7}), "request needs a string 'cmd'"),
        (msgpack.packb({"cmd": "explode"}), "unknown command: 'explode'"),
        (msgpack.packb({1: "status"}), "not valid msgpack"),  # int keys refused
    ],
)
def test_bad_frames_get_an_error_and_the_connection_stays_usable(
    running_daemon: dict[str, Any], body: bytes, error: str
) -> None:
    with _connect(running_daemon["control_socket"]) as sock:
        sock.sendall(_frame(body))
        reply = _read_reply(sock)
        assert reply is not None
        assert reply["ok"] is False
        assert error in reply["error"]
        sock.sendall(encode_frame({"cmd": "status"}))
        again = _read_reply(sock)
        assert again is not None and again["pid"] == running_daemon["pid"]


def test_unknown_command_through_the_client(running_daemon: dict[str, Any]) -> None:
    with pytest.raises(ControlError, match="unknown command: 'frobnicate'"):
        request("frobnicate")


def test_hub_commands_are_forwarded_and_bad_args_are_errors(
    running_daemon: dict[str, Any], daemon_env: DaemonEnv
) -> None:
    request("status")  # the hub is built right after status answers
    try:
        reply = request("lock.status", root=str(daemon_env.workdir), timeout=30)
    except ControlError as exc:
        pytest.fail(f"lock.status through the daemon failed: {exc}")
    assert reply["holder"] in {"user", "model"}
    with pytest.raises(ControlError, match=r"^lock\.take: "):
        request("lock.take", root=str(daemon_env.workdir), mode="sideways")


def test_silent_client_is_dropped_while_others_are_served(running_daemon: dict[str, Any]) -> None:
    with _connect(running_daemon["control_socket"], timeout=READ_TIMEOUT_S + 10) as silent:
        _still_serving(running_daemon["pid"])
        started = time.monotonic()
        assert _read_reply(silent) is None  # closed by the daemon, no reply
        assert time.monotonic() - started < READ_TIMEOUT_S + 5
    _still_serving(running_daemon["pid"])


def test_client_stalled_mid_frame_is_dropped(running_daemon: dict[str, Any]) -> None:
    with _connect(running_daemon["control_socket"], timeout=READ_TIMEOUT_S + 10) as stalled:
        stalled.sendall(struct.pack(">I", 100) + b"\x81")
        _still_serving(running_daemon["pid"])
        assert _read_reply(stalled) is None
    _still_serving(running_daemon["pid"])


def test_client_that_disconnects_mid_frame(running_daemon: dict[str, Any]) -> None:
    for partial in (b"\x00\x00", struct.pack(">I", 1000) + b"\x81\xa3cmd"):
        with _connect(running_daemon["control_socket"]) as sock:
            sock.sendall(partial)
        _still_serving(running_daemon["pid"])


def test_client_that_disconnects_before_the_reply(running_daemon: dict[str, Any]) -> None:
    for _ in range(20):
        with _connect(running_daemon["control_socket"]) as sock:
            sock.sendall(encode_frame({"cmd": "stats"}))
    _still_serving(running_daemon["pid"])


KNOWN_COMMANDS = ["status", "stats", "lock.status", "shadow.pending", "shadow.diff"]
msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text()
    | st.binary(max_size=64),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
requests = st.dictionaries(st.text(max_size=12), msgpack_values, max_size=5).flatmap(
    lambda args: (
        st.one_of(st.sampled_from(KNOWN_COMMANDS), st.text(max_size=16))
        .filter(lambda cmd: cmd != "stop")
        .map(lambda cmd: {**args, "cmd": cmd})
    )
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    frame=st.one_of(
        requests.map(lambda message: _frame(msgpack.packb(message))),
        st.binary(max_size=256).map(_frame),
        st.binary(max_size=64),  # raw bytes, not even a frame
    )
)
def test_generated_frames_never_hurt_the_daemon(
    running_daemon: dict[str, Any], frame: bytes
) -> None:
    with _connect(running_daemon["control_socket"]) as sock:
        sock.sendall(frame)
        sock.shutdown(socket.SHUT_WR)  # EOF: a partial frame ends at once, not by timeout
        while (reply := _read_reply(sock)) is not None:
            assert isinstance(reply.get("ok"), bool)
            if not reply["ok"]:
                assert isinstance(reply["error"], str) and reply["error"]
    _still_serving(running_daemon["pid"])


NOBODY = 65534
CONNECT_AS_NOBODY = """
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(sys.argv[1])
except OSError as exc:
    print(type(exc).__name__)
else:
    print("connected")
"""


def _connect_as_nobody(path: str) -> str:
    done = subprocess.run(
        ["/usr/bin/python3", "-I", "-c", CONNECT_AS_NOBODY, path],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to user nobody needs root")
@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="needs a system python3")
def test_another_user_cannot_connect(daemon_env: DaemonEnv, running_daemon: dict[str, Any]) -> None:
    daemon_env.base.chmod(0o755)  # the temp base is traversable: only our modes protect
    run_dir = Path(running_daemon["control_socket"]).parent
    for key in ("control_socket", "lsp_socket"):
        assert _connect_as_nobody(running_daemon[key]) == "PermissionError"
    run_dir.chmod(0o755)  # the socket's own 0600 mode refuses too
    try:
        for key in ("control_socket", "lsp_socket"):
            assert stat.S_IMODE(os.stat(running_daemon[key]).st_mode) == 0o600
            assert _connect_as_nobody(running_daemon[key]) == "PermissionError"
    finally:
        run_dir.chmod(0o700)
    _still_serving(running_daemon["pid"])


def test_client_reports_not_running(daemon_env: DaemonEnv) -> None:
    with pytest.raises(DaemonNotRunning):
        request("status")
