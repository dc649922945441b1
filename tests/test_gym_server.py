"""The gym's HTTP server and its guards, without Docker: a real `GymServer` over a gym whose engine is down.

The token is checked before any body is read; a body is framed by a strict Content-Length (a chunked one, a
negative or non-numeric length, an over-cap one: an error and the connection closed, never a 500 or a body
left in a kept-alive stream); JSON nested too deeply is a 400; a client that stops sending is dropped after
the server's client timeout; `/health` does not say where Docker is. Also: tokens shorter than 16 characters are
refused, a generated one goes to a 0600 file; the CLI's limits of 0 are usage errors; text UTF-8 cannot hold
is refused as a tool argument and never breaks a transcript; a stopped gym opens nothing.
"""

from __future__ import annotations

import json
import socket
import stat
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from typer.testing import CliRunner

from swe_forge_dagster.cli import app
from swe_forge_dagster.cli.gym import _token
from swe_forge_dagster.gym.config import GymConfig
from swe_forge_dagster.gym.environment import OpenFailed
from swe_forge_dagster.gym.episodes import MAX_TRANSCRIPT_TEXT, Transcript
from swe_forge_dagster.gym.server import GymServer
from swe_forge_dagster.gym.service import Gym, GymStopping
from swe_forge_dagster.gym.tools import ToolError, parse_arguments
from swe_forge_dagster.harness.models import HarnessTask
from tests.support.common import BASE_IMAGE

TOKEN = "s3cret-token-0123456789"
GOOD = {"Authorization": f"Bearer {TOKEN}"}


def _task() -> HarnessTask:
    return HarnessTask(
        task_id="acme__calc-1",
        repo="acme/calc",
        base_commit="a" * 40,
        prompt="fix it",
        mode="tests",
        fail_to_pass=("t.py::x",),
        image=BASE_IMAGE,
        test_command="pytest",
    )


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GymServer:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/secret-place/docker.sock")
    gym = Gym(GymConfig(state_dir=tmp_path / "state"), lake_dir=tmp_path / "lake")
    # the client-wait bound, short for the slow-client check
    served = GymServer(gym, {"acme__calc-1": _task()}, TOKEN, client_timeout=1.5).start()
    yield served
    served.stop()
    gym.close()


def raw(url: str, request: bytes, wait: float = 10) -> tuple[int, bytes]:
    """Send raw bytes; (the status, everything the server sent until it closed the connection)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return (int(received.split(b" ", 2)[1]) if received else 0), received


def post(path: str, body: bytes, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: gym", *headers, "", ""]
    return "\r\n".join(lines).encode() + body


def test_the_token_comes_before_the_body_and_bodies_are_framed_strictly(server: GymServer) -> None:
    url, auth = server.url, f"Authorization: Bearer {TOKEN}"
    # no token: 401 before the (huge, never sent) body is read, and the connection closes
    assert raw(url, post("/open", b"", "Content-Length: 999999999"))[0] == 401
    assert raw(url, post("/open", b"{}", "Content-Length: 2", "Authorization: Bearer wrong"))[0] == 401
    invalid = "Invalid HTTP request"  # refused by the HTTP parser (h11) itself, before the app
    cases = {
        "Content-Length: -1": (400, invalid),  # once `rfile.read(-1)`: a read to EOF past the cap
        "Content-Length: abc": (400, invalid),  # once a 500
        "Content-Length: 1e3": (400, invalid),
        "Content-Length: 5, 6": (400, invalid),
        f"Content-Length: {(32 << 20) + 1}": (413, "over"),
        "Transfer-Encoding: chunked": (411, "chunked"),  # a well-formed chunked body, refused all the same
    }
    for header, (status, message) in cases.items():
        got, text = raw(url, post("/open", b"2\r\n{}\r\n0\r\n\r\n", auth, header))
        assert got == status and message.encode() in text, (header, text)
        assert text.count(b"HTTP/1.1 ") == 1  # closed: the rest was never parsed as another request
    nested = b"[" * 100_000 + b"]" * 100_000
    got, text = raw(url, post("/call", nested, auth, f"Content-Length: {len(nested)}", "Connection: close"))
    assert got == 400 and b"nested too deeply" in text, text[:300]


def test_a_client_that_stops_sending_is_dropped(server: GymServer) -> None:
    started = time.monotonic()
    got, text = raw(server.url, post("/open", b'{"task', f"Authorization: Bearer {TOKEN}", "Content-Length: 50"))
    assert (got, time.monotonic() - started < 8) == (408, True), text
    for silent in (b"POST /open HTTP/1.1\r\nHost: gym\r\n", b""):  # headers never finished; nothing sent at all
        started = time.monotonic()
        assert raw(server.url, silent) == (0, b"")
        assert time.monotonic() - started < 8


def test_health_says_whether_docker_answers_not_where_it_is(server: GymServer) -> None:
    health = httpx.get(f"{server.url}/health")
    assert health.json()["docker"] is False and "secret-place" not in health.text and "docker_error" not in health.text


def test_answer_through_call_is_checked_like_any_call(server: GymServer) -> None:
    for arguments in ({"force": True}, {}, "{not json"):
        response = httpx.post(
            f"{server.url}/call", json={"env_id": "e0", "tool": "answer", "arguments": arguments}, headers=GOOD
        )
        assert response.status_code == 404 and "no environment 'e0'" in response.json()["error"], response.text


def test_tokens_must_be_long_and_a_made_one_is_written_privately(tmp_path: Path) -> None:
    gym = Gym(GymConfig(state_dir=tmp_path / "state"))
    try:
        for token in ("short-token", " " * 20, "", f" {TOKEN} "):
            with pytest.raises(ValueError, match="token"):
                GymServer(gym, {}, token)
    finally:
        gym.close()
    made = _token(None, tmp_path / "state")
    path = tmp_path / "state" / "token"
    assert len(made) >= 16 and path.read_text().strip() == made
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _token(TOKEN, tmp_path / "state") == TOKEN


@pytest.mark.parametrize("option", ["--idle-timeout", "--episode-timeout", "--test-timeout", "--max-envs"])
def test_limits_of_zero_are_usage_errors(option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWE_FORGE_HOME", str(tmp_path / "home"))
    done = CliRunner().invoke(app, ["gym", "serve", "--input", str(tmp_path), option, "0"])
    assert done.exit_code == 2 and option.lstrip("-").replace("-", "_") in done.output, done.output  # not a default
    short = CliRunner().invoke(app, ["gym", "serve", "--input", str(tmp_path)], env={"SWE_FORGE_GYM_TOKEN": "abc"})
    assert short.exit_code == 2 and "16" in short.output, short.output


def test_text_utf8_cannot_hold_is_refused_and_never_breaks_a_transcript(tmp_path: Path) -> None:
    for arguments in ({"command": "echo \ud800"}, '{"command": "echo \\ud800"}'):
        with pytest.raises(ToolError, match="lone surrogate"):
            parse_arguments("bash", arguments)
    with pytest.raises(ToolError, match="lone surrogate"):
        parse_arguments("str_replace", {"path": "a", "old_str": "x", "new_str": "\udc80"})
    transcript = Transcript(tmp_path / "t.jsonl")
    transcript.append({"tool": "bash", "arguments": {"command": "echo \ud800"}, "observation": "bad \udfff"})
    big = {"content": "x" * (MAX_TRANSCRIPT_TEXT * 2)}
    transcript.append({"tool": "create", "arguments": big, "observation": "y" * (MAX_TRANSCRIPT_TEXT * 2)})
    first, second = (json.loads(line) for line in transcript.path.read_text(encoding="utf-8").splitlines())
    assert first["arguments"]["command"] == "echo \ud800"  # written as its JSON escape: read back the same
    assert len(second["arguments"]) == len(second["observation"]) == MAX_TRANSCRIPT_TEXT + len("[...]")


def test_a_stopped_gym_opens_nothing_and_the_first_open_starts_the_reaper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    gym = Gym(GymConfig(state_dir=tmp_path / "state"))
    assert gym._reaper is None
    with pytest.raises(OpenFailed):
        gym.open(_task())
    assert gym._reaper is not None and gym._reaper.is_alive()
    gym.close()
    with pytest.raises(GymStopping):
        gym.open(_task())


def test_the_openapi_schema_is_served_without_a_token_and_names_every_route(server: GymServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert (
        schema["openapi"].startswith("3.1") and schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    )
    routes = {(method.upper(), path) for path, ops in schema["paths"].items() for method in ops}
    gets = {("GET", path) for path in ("/health", "/tools", "/tasks", "/environments")}
    assert routes == gets | {("POST", path) for path in ("/open", "/call", "/answer", "/close")}
    open_op = schema["paths"]["/open"]["post"]
    assert open_op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/OpenRequest")
    assert {"401", "422", "429"} <= set(open_op["responses"]) and "security" not in schema["paths"]["/health"]["get"]
    assert "task_id" in schema["components"]["schemas"]["OpenRequest"]["properties"]
    with httpx.Client(base_url=server.url, headers=GOOD) as client:  # every documented route is served
        for method, path in sorted(routes):
            response = client.request(method, path, json={} if method == "POST" else None)
            assert response.status_code != 404 or "no environment" in response.text or "no task" in response.text
            assert "no route" not in response.text, (method, path, response.text)


def test_calls_share_one_kept_alive_connection_and_trailing_slashes_are_the_same_route(server: GymServer) -> None:
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock, sock.makefile("rb") as replies:
        for path in ("/tools", "/tasks/", "/environments", "/health"):  # one connection, four requests
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: gym\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
            status = replies.readline()
            head = dict(line.decode().strip().lower().split(": ", 1) for line in iter(replies.readline, b"\r\n"))
            body = json.loads(replies.read(int(head["content-length"])))
            assert b" 200 " in status and head["server"] == "swe-forge-gym" and "connection" not in head, (path, body)
    assert httpx.get(f"{server.url}/tools/x", headers=GOOD).json()["error"] == "no route GET /tools/x"
    assert httpx.get(f"{server.url}/open", headers=GOOD).json()["error"] == "no route GET /open"  # the wrong method
