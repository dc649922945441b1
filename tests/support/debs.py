"""Small `.deb` files built in tests (real `ar` bytes, real xz/gzip/plain data archives), as dpkg lays them out."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from swe_forge_dagster.common.buildx import PLUGIN_MEMBER

PLUGIN = b"#!/bin/sh\necho 'github.com/docker/buildx v0.0.0-test'\n"


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    """An `ar` archive as GNU ar writes it: magic, then a 60-byte header and even-padded data per member."""
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}`\n".encode()
        assert len(header) == 60
        out += header + data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def tar_bytes(files: dict[str, bytes], mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def make_deb(path: Path, data_name: str = "data.tar.xz", plugin: bytes = PLUGIN, member: str = PLUGIN_MEMBER) -> Path:
    """A `.deb` as dpkg lays it out (`debian-binary`, `control.tar.*`, `data.tar.*`, paths prefixed `./`)."""
    mode = {"data.tar.xz": "w:xz", "data.tar.gz": "w:gz", "data.tar": "w"}[data_name]
    data = tar_bytes({"./usr/share/doc/docker-buildx/copyright": b"x\n", f"./{member}": plugin}, mode)
    control = tar_bytes({"./control": b"Package: docker-buildx\n"}, "w:xz")
    path.write_bytes(ar_archive([("debian-binary", b"2.0\n"), ("control.tar.xz", control), (data_name, data)]))
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
