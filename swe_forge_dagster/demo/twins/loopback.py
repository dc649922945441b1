"""Start/stop of a twin: a `ThreadingHTTPServer` on 127.0.0.1, port chosen by the OS, in a daemon thread.

Every twin serves the same way; only its server class, its handler and where its API is rooted
differ. Binding is to loopback only: the twins must never be reachable from another address.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

HOST = "127.0.0.1"


class LoopbackService:
    """Mixin: subclasses set `server_class`, `handler_class`, `url_path` and `thread_name`."""

    server_class: type[ThreadingHTTPServer]
    handler_class: type[BaseHTTPRequestHandler]
    url_path: str = ""
    thread_name: str = "twin"
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def start(self, port: int = 0) -> Self:
        server = self.server_class((HOST, port), self.handler_class)
        server.twin = self  # type: ignore[attr-defined]
        self._server = server
        self.url = f"http://{HOST}:{server.server_address[1]}{self.url_path}"
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def drop_clients(self, timeout: float = 60) -> None:
        """Stop listening and listen again on the same port, once every connection already taken has ended.

        A killed client's requests may still wait in the kernel's accept queue, not yet seen by any handler, and be
        answered (and counted) long after it died on a loaded machine: closing the listening socket resets them, and
        the connections already accepted end on their own (the client's end is closed). Tests that count requests
        call this between a killed client and the run they count."""
        server = self._server
        if server is None:
            raise RuntimeError(f"{self.thread_name}: not started")
        port = server.server_address[1]
        self.stop()
        deadline = time.monotonic() + timeout
        while getattr(server, "open_connections", 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        if getattr(server, "open_connections", 0):
            raise TimeoutError(f"{self.thread_name}: connections still open after {timeout} s")
        self.start(port)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
