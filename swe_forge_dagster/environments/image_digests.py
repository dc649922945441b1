"""The registry digest of each environment image this machine pushed or pulled, kept across processes.

A tag names whatever was pushed under it last (two machines may both build a recipe's image); the
digest names one image for good. The environment stage saves the digest of the image it used, so a
later stage on another host pulls exactly that image (`execution.registry`). Each task stage runs in
a process of its own, and the environment stage mostly reuses an image an earlier process built and
pushed, so the digest is kept on disk beside the repository cache, not only in memory: one small
JSON file per tag, with the id of the image it was learned for. An image built again here under the
same tag (its push failed, or another recipe procedure ran) has another id, and its old digest is
then not claimed for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from swe_forge_dagster.execution.registry import DIGEST


@dataclass(frozen=True)
class DigestRecord:
    """What the registry called `tag` when this machine last pushed or pulled it."""

    tag: str
    digest: str
    image_id: str
    """The local image the digest was learned for: a record is only claimed for that image."""


class DigestBook:
    """tag -> `DigestRecord`, in memory and in `folder` (created on the first record); thread- and process-safe
    (each record is written whole, by an atomic rename)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._known: dict[str, DigestRecord] = {}
        self._guard = threading.Lock()

    def record(self, tag: str, digest: str | None, image_id: str | None) -> None:
        """Remember that `tag` (the local image `image_id`) is `digest` in the registry; nothing without both."""
        if not digest or not image_id or not DIGEST.fullmatch(digest):
            return
        entry = DigestRecord(tag, digest, image_id)
        with self._guard:
            self._known[tag] = entry
        with contextlib.suppress(OSError):  # a read-only or full disk costs the record, never the image
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".digest-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"tag": tag, "digest": digest, "image_id": image_id}, out)
            os.replace(tmp, self._path(tag))

    def get(self, tag: str) -> DigestRecord | None:
        """The last record of `tag` (this process's, else the folder's), or None."""
        with self._guard:
            known = self._known.get(tag)
        if known is not None:
            return known
        try:
            data = json.loads(self._path(tag).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("tag") != tag or not DIGEST.fullmatch(str(data.get("digest"))):
            return None  # another tag's file under the same escaped name, or a damaged one
        return DigestRecord(tag, str(data["digest"]), str(data.get("image_id") or ""))

    def digest_of(self, tag: str, image_id: str | None) -> str | None:
        """The digest of `tag` when it still describes the local image `image_id`; with no `image_id` (the image is
        not on this engine) the last digest this machine knew for the tag, the best guess there is."""
        entry = self.get(tag)
        if entry is None or (image_id is not None and entry.image_id != image_id):
            return None
        return entry.digest

    def _path(self, tag: str) -> Path:
        return self.folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tag)}.json"
