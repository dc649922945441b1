"""A Docker engine and registry in memory, as far as `execution.registry` uses them: get, tag, push, pull, remove.

For the fast tier: what a push streams back (`aux.Digest`, the `digest:` status line), what a pull
by tag or by digest leaves behind (the local name, the transfer name, `RepoDigests`), and a registry
that is down or has lost a digest, without a Docker engine. References behave as Docker's do where
the code relies on it: a pull by tag records the digest in `RepoDigests`, untagging a repository's
tag drops its digest references too, and an image's id is the same on every engine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import docker


@dataclass
class FakeImage:
    engine: FakeImages
    id: str
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def attrs(self) -> dict[str, Any]:
        return {"RepoDigests": self.engine.repo_digests(self), "Size": 1000}

    def tag(self, repository: str, tag: str | None = None) -> bool:
        self.engine.local[f"{repository}:{tag or 'latest'}"] = self
        return True


@dataclass
class FakeImages:
    """`client.images`: `local` maps this engine's references to images, `remote` (the registry, which engines may
    share) (repository, tag or digest) to the pushed image's (id, digest)."""

    local: dict[str, FakeImage] = field(default_factory=dict)
    remote: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    down: bool = False
    report: str = "aux"
    """How a push names its digest: "aux" (as Docker does), "status" (its last status line only), "none"."""
    pulls: list[str] = field(default_factory=list)

    def build(self, tag: str, content: str) -> FakeImage:
        """An image made here (a build), tagged `tag`."""
        image = FakeImage(self, "sha256:" + hashlib.sha256(content.encode()).hexdigest())
        self.local[tag] = image
        return image

    def get(self, name: str) -> FakeImage:
        if name not in self.local:
            raise docker.errors.ImageNotFound(f"No such image: {name}")
        return self.local[name]

    def repo_digests(self, image: FakeImage) -> list[str]:
        return sorted(name for name, found in self.local.items() if "@" in name and found is image)

    def push(self, repository: str, tag: str, stream: bool, decode: bool) -> Iterator[dict[str, Any]]:
        assert stream and decode
        if self.down:
            return iter([{"status": "The push refers to repository"}, {"error": "connection refused"}])
        image = self.get(f"{repository}:{tag}")
        digest = "sha256:" + hashlib.sha256(f"manifest {image.id}".encode()).hexdigest()
        self.remote[(repository, tag)] = self.remote[(repository, digest)] = (image.id, digest)
        self.local[f"{repository}@{digest}"] = image
        lines: list[dict[str, Any]] = [{"status": "Pushed", "id": "abc"}]
        if self.report != "none":
            lines.append({"status": f"{tag}: digest: {digest} size: 9"})
        if self.report == "aux":
            lines.append({"progressDetail": {}, "aux": {"Tag": tag, "Digest": digest, "Size": 9}})
        return iter(lines)

    def pull(self, repository: str, tag: str) -> FakeImage:
        self.pulls.append(f"{repository}{'@' if tag.startswith('sha256:') else ':'}{tag}")
        if self.down:
            raise docker.errors.APIError("500", explanation="dial tcp 127.0.0.1:5000: connect: connection refused")
        if (repository, tag) not in self.remote:
            raise docker.errors.NotFound("404", explanation=f"manifest for {repository}:{tag} not found")
        image_id, digest = self.remote[(repository, tag)]
        image = next((found for found in self.local.values() if found.id == image_id), None) or FakeImage(
            self, image_id
        )
        self.local[f"{repository}@{digest}"] = image
        if not tag.startswith("sha256:"):
            self.local[f"{repository}:{tag}"] = image
        return image

    def remove(self, name: str, noprune: bool = False, force: bool = False) -> None:
        if name not in self.local:
            raise docker.errors.ImageNotFound(name)
        image = self.local.pop(name)
        if "@" not in name:  # Docker drops a repository's digest references with its last tag
            repository = name.rsplit(":", 1)[0]
            if not any(ref.rsplit(":", 1)[0] == repository for ref in self.local if "@" not in ref):
                for ref in [r for r, found in self.local.items() if found is image and r.startswith(f"{repository}@")]:
                    del self.local[ref]


@dataclass
class FakeClient:
    """`docker.DockerClient` as far as the registry and `Environments`' registry methods use it."""

    images: FakeImages = field(default_factory=FakeImages)
