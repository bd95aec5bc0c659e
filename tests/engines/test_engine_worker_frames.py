"""The frames between the daemon and its engine worker: what goes in comes out, a frame
over the limit is refused on both ends (before it is read whole), and a broken peer is
ChannelClosed, never a hang or a partial message."""

from __future__ import annotations

import socket
import struct

import pytest
from shadowtab.inference.engines.worker.frames import ChannelClosed, FrameChannel
from shadowtab.inference.msgpack_frames import FrameError


def channel_pair(limit: int = 1024) -> tuple[FrameChannel, FrameChannel]:
    left, right = socket.socketpair()
    return FrameChannel(left, limit), FrameChannel(right, limit)


def test_messages_round_trip_with_plain_values() -> None:
    ours, theirs = channel_pair()
    ours.send({"op": "call", "id": 7, "args": {"stop": ("a", "b"), "path": object}})
    message = theirs.recv()
    assert message["id"] == 7 and message["args"]["stop"] == ["a", "b"]
    assert isinstance(message["args"]["path"], str)  # an odd value becomes text


def test_a_frame_over_the_limit_is_refused_on_both_ends() -> None:
    ours, theirs = channel_pair(limit=64)
    with pytest.raises(FrameError, match="over the 64-byte frame limit"):
        ours.send({"text": "x" * 100})
    ours.sock.sendall(struct.pack(">I", 1 << 30))  # announces 1 GiB, sends nothing more
    with pytest.raises(FrameError, match="over the 64-byte limit"):
        theirs.recv()  # refused from the header alone


def test_bad_bodies_and_closed_peers() -> None:
    ours, theirs = channel_pair()
    ours.sock.sendall(struct.pack(">I", 3) + b"\xc1\xc1\xc1")  # not msgpack
    with pytest.raises(FrameError, match="not valid msgpack"):
        theirs.recv()
    ours.sock.sendall(struct.pack(">I", 1) + b"\x01")  # msgpack, but not a map
    with pytest.raises(FrameError, match="must be a msgpack map"):
        theirs.recv()
    ours.sock.sendall(struct.pack(">I", 10) + b"\x80")  # cut in the middle of a frame
    ours.close()
    with pytest.raises(ChannelClosed):
        theirs.recv()
    with pytest.raises(ChannelClosed):
        theirs.send({"op": "beat"})
