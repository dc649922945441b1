"""A loopback HTTP(S) static file server standing in for data.gharchive.org, with scripted faults.

It serves GET and HEAD of the files under `root` (with Content-Length, 404 when missing) from a
`ThreadingHTTPServer` bound to 127.0.0.1 on an ephemeral port, in a daemon thread. Faults are
scripted per file name (the last path segment) and consumed in the order they were queued:

    with GharchiveServer(mirror) as server:
        server.fail_next("2015-01-01-5.json.gz", 500)          # one 500, then the real file
        server.truncate_next("2015-01-01-5.json.gz")           # then a cut body, then the file
        server.delay("2015-01-01-6.json.gz", 0.2)              # every request waits 0.2 s
        server.delay("2015-01-01-7.json.gz", 600, "GET")       # downloads hang, HEADs answer

With `tls=True` it serves https with a self-signed certificate for 127.0.0.1 made by the
`openssl` CLI; `ca_file` is that certificate, to pass as a client's CA bundle (`verify=`).
"""

from __future__ import annotations

import collections
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

HOST = "127.0.0.1"


@dataclass(frozen=True)
class _Fault:
    kind: str  # "status" or "truncate"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def make_self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate (CN localhost, SAN IP:127.0.0.1) and its key, via `openssl`."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,digitalSignature,keyCertSign",
            "-addext",
            "extendedKeyUsage=serverAuth",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait on handlers still sleeping for a client that left
    twin: GharchiveServer

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients that hang up (timeouts, failed TLS handshakes) are expected; count, don't print.
        self.twin._note_error()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.server.twin._note_tls_failure()
                raise

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def _serve(self, send_body: bool) -> None:
        twin = self.server.twin
        url_path = unquote(urlsplit(self.path).path)
        name = url_path.rsplit("/", 1)[-1]
        twin._begin(self.command, self.path)
        try:
            seconds, method = twin._delays.get(name, (0.0, None))
            if seconds and method in (None, self.command):
                time.sleep(seconds)
            fault = twin._take_fault(name, self.command)
            file = twin._resolve(url_path)
        finally:
            # In flight = from reading the request until the response starts: the client cannot
            # finish (and start another request) before this point, so the peak is exact.
            twin._end()
        if fault is not None and fault.kind == "status":
            self._send_simple(fault.status, f"injected {fault.status}\n", fault.headers, send_body)
            return
        if file is None:
            self._send_simple(404, "not found\n", {}, send_body)
            return
        data = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/gzip" if name.endswith(".gz") else "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        if fault is not None and fault.kind == "truncate":
            self.send_header("Connection", "close")
        self.end_headers()
        if not send_body:
            return
        if fault is not None and fault.kind == "truncate":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)

    def _send_simple(self, status: int, text: str, headers: dict[str, str], send_body: bool) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


class GharchiveServer:
    """A static GH Archive twin on http(s)://127.0.0.1:<port>; see the module docstring."""

    def __init__(self, root: Path, tls: bool = False) -> None:
        self.root = Path(root).resolve()
        self.tls = tls
        self.requests: list[tuple[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.tls_failures = 0
        self.errors = 0
        self.ca_file: Path | None = None
        self._lock = threading.Lock()
        self._faults: dict[str, collections.deque[_Fault]] = collections.defaultdict(collections.deque)
        self._delays: dict[str, tuple[float, str | None]] = {}
        self._tmp: Path | None = None
        self._httpd = _Server((HOST, 0), _Handler)
        self._httpd.twin = self
        if tls:
            self._tmp = Path(tempfile.mkdtemp(prefix="gharchive-twin-"))
            cert, key = make_self_signed_cert(self._tmp)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            # Handshakes happen in each handler thread, so a failing client never blocks accept().
            self._httpd.socket = context.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
            self.ca_file = cert
        port = self._httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://{HOST}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="gharchive-twin", daemon=True
        )
        self._thread.start()

    # -- fault scripting -------------------------------------------------------------------

    def fail_next(self, name: str, status: int, times: int = 1, headers: dict[str, str] | None = None) -> None:
        """The next `times` requests (GET or HEAD) for `name` answer `status` with `headers`."""
        with self._lock:
            for _ in range(times):
                self._faults[name].append(_Fault("status", status, dict(headers or {})))

    def truncate_next(self, name: str, times: int = 1) -> None:
        """The next `times` GETs of `name` send the full Content-Length but half the body, then close."""
        with self._lock:
            for _ in range(times):
                self._faults[name].append(_Fault("truncate"))

    def delay(self, name: str, seconds: float, method: str | None = None) -> None:
        """Every request (or every `method` request) for `name` waits `seconds` before answering (0 to stop)."""
        with self._lock:
            self._delays[name] = (seconds, method)

    # -- observations ----------------------------------------------------------------------

    def count(self, name: str, method: str | None = None) -> int:
        """Requests whose path ends in `/name` (optionally only those using `method`)."""
        with self._lock:
            return sum(
                1
                for m, path in self.requests
                if unquote(urlsplit(path).path).rsplit("/", 1)[-1] == name and (method is None or m == method)
            )

    # -- lifecycle -------------------------------------------------------------------------

    def shutdown(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> GharchiveServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.shutdown()

    # -- used by the handler ---------------------------------------------------------------

    def _begin(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _take_fault(self, name: str, method: str) -> _Fault | None:
        with self._lock:
            queue = self._faults.get(name)
            if not queue:
                return None
            if queue[0].kind == "truncate" and method != "GET":
                return None  # a HEAD has no body to cut: leave the fault for the next GET
            return queue.popleft()

    def _resolve(self, url_path: str) -> Path | None:
        candidate = (self.root / url_path.lstrip("/")).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        return candidate

    def _note_tls_failure(self) -> None:
        with self._lock:
            self.tls_failures += 1

    def _note_error(self) -> None:
        with self._lock:
            self.errors += 1
