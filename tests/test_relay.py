"""The loopback relays that carry the deployment's services to worker hosts (`orchestration/relay.py`), on real
sockets: bytes both ways, end of stream passed on, peers outside the allowed network refused, and the ports of every
loopback URL among a run's settings found (and no other)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from swe_forge_dagster.orchestration.relay import Route, loopback_ports, serve


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _echo_upper(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    data = await reader.read()  # to the end of the stream: the relay must pass the client's half-close on
    writer.write(data.upper())
    await writer.drain()
    writer.close()


async def _round_trip(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        writer.write_eof()
        return await reader.read()
    except ConnectionResetError:  # a refused peer's connection is closed before its bytes are read
        return b""
    finally:
        writer.close()


def test_the_relay_carries_bytes_both_ways_and_refuses_peers_outside_its_networks() -> None:
    async def scenario() -> tuple[bytes, bytes]:
        upstream = await asyncio.start_server(_echo_upper, "127.0.0.1", 0)
        target = upstream.sockets[0].getsockname()[1]
        open_port, closed_port = _free_port(), _free_port()
        relays = [
            asyncio.create_task(serve([Route("127.0.0.1", open_port, "127.0.0.1", target)], ["127.0.0.0/8"])),
            asyncio.create_task(serve([Route("127.0.0.1", closed_port, "127.0.0.1", target)], ["10.9.0.0/16"])),
        ]
        await asyncio.sleep(0.3)
        payload = b"x" * 300_000  # over one read of the relay
        try:
            return await _round_trip(open_port, payload), await _round_trip(closed_port, b"hello")
        finally:
            for relay in relays:
                relay.cancel()
            upstream.close()

    carried, refused = asyncio.run(scenario())
    assert carried == b"X" * 300_000
    assert refused == b""  # closed at once: the peer is not in 10.9.0.0/16


def test_every_loopback_url_among_the_settings_is_relayed_and_nothing_else() -> None:
    values = [
        "postgresql://swe_forge:p%40ss@127.0.0.1:5433/dagster",
        "http://127.0.0.1:8333",
        "amqp://swe-forge:secret@127.0.0.1:5672//",
        "http://127.0.0.1:9000/{repo}.git",
        "http://localhost:3000",
        "http://[::1]:8080/x",
        "https://api.github.com",
        "http://10.0.0.5:9999",
        "file:///srv/git/{repo}.git",
        "not a url at all 127.0.0.1:1234",
        "http://127.0.0.1:8333/again",
    ]
    assert loopback_ports(values) == [5433, 8333, 5672, 9000, 3000, 8080]


@pytest.mark.parametrize("text", ["0", "70000", "abc", "80:x"])
def test_a_bad_port_is_named(text: str) -> None:
    with pytest.raises(ValueError, match="port"):
        Route.parse(text, "127.0.0.1", "127.0.0.1")
