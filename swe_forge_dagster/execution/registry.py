"""Environment images shared through an image registry (`SWE_FORGE_REGISTRY`, e.g. `127.0.0.1:5000`).

An environment image takes minutes to build and exists only on the engine that built it. With a
registry, `Environments` pulls an image before building it and pushes what it built, so a second
machine (or a run container on another host) starts warm. The image keeps its local name
(`swe-forge-env/<repo>:<recipe>`): the registry name is only a transfer name, untagged again
after each pull and push, so the rest of the execution layer never sees it.

Every push and pull also learns the image's registry digest (`sha256:…` of its manifest): a tag can
be pushed again by another machine, a digest always names the same image, so a later stage on
another host pulls by digest exactly the image its environment stage used (`pull(tag, digest)`).

The registry is an accelerator, never a requirement: a pull that fails (image absent, registry
down, TLS refused) is logged with its reason and the image is built; a failed push is logged and
the build still counts. Docker allows plain-HTTP registries on 127.0.0.0/8 by default; another
address needs TLS or the engine's `insecure-registries`.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import docker
from docker.models.images import Image

from swe_forge_dagster.common.registry_address import REGISTRY_SETTING, RegistryConfigError, parse_registry

log = logging.getLogger(__name__)

__all__ = [
    "REGISTRY_SETTING",
    "ImageRegistry",
    "Pulled",
    "Pushed",
    "RegistryConfigError",
    "parse_registry",
    "pushed_digest",
    "repo_digest",
]

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""A registry digest, as Docker reports it and as a pull by digest takes it."""
_STATUS_DIGEST = re.compile(r"\bdigest: (sha256:[0-9a-f]{64})\b")
"""The last status line of a push (`<tag>: digest: sha256:… size: …`), for engines that send no `aux`."""


@dataclass(frozen=True)
class Pushed:
    """A push's outcome; true when the registry has the image now (`push` returned that bool before it learned
    digests, and callers that only ask whether it worked still can)."""

    ok: bool
    digest: str | None = None
    """The pushed manifest's digest (None when the push failed, or the engine did not say)."""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class Pulled:
    """A pull's outcome: the image under its local name, or why there is none (`problem`, one line)."""

    image: Image | None
    digest: str | None = None
    """The pulled manifest's digest: the one asked for, or the one the engine recorded for a pull by tag."""
    problem: str | None = None

    def __bool__(self) -> bool:
        return self.image is not None


@dataclass
class ImageRegistry:
    """Pull and push images of one engine through one registry; every outcome is kept in `events`."""

    client: docker.DockerClient
    address: str
    events: list[str] = field(default_factory=list)
    """What happened, newest last ("pulled …", "pull failed …", "pushed …"): tests and metadata read it."""

    def remote(self, tag: str) -> tuple[str, str]:
        """(repository, tag) of `tag` in the registry."""
        repository, version = _split(tag)
        return f"{self.address}/{repository}", version

    def pull(self, tag: str, digest: str | None = None) -> Image | None:
        """The image `tag`, pulled from the registry (by `digest` when given) and tagged locally, or None (reason
        logged): `pull_image` says why."""
        return self.pull_image(tag, digest).image

    def pull_image(self, tag: str, digest: str | None = None) -> Pulled:
        """Pull `tag` (or exactly the image `digest` names) and tag it `tag` here; a failure is logged, never raised.

        By digest the transfer name is `<registry>/<repo>@sha256:…`, dropped again like a tag's.
        """
        repository, version = self.remote(tag)
        name = f"{repository}@{digest}" if digest else f"{repository}:{version}"
        instead = "" if digest else ", building instead"  # by digest, the caller decides what comes instead
        if digest is not None and not DIGEST.fullmatch(digest):
            return self._failed(logging.WARNING, f"pull of {repository}@{digest} refused: not a sha256 digest")
        try:
            image = self.client.images.pull(repository, tag=digest or version)
        except docker.errors.NotFound as exc:
            return self._failed(logging.INFO, f"pull of {name} found nothing{instead}: {_why(exc)}")
        except docker.errors.DockerException as exc:
            return self._failed(logging.WARNING, f"pull of {name} failed{instead}: {_why(exc)}")
        known = digest or repo_digest(image.attrs.get("RepoDigests") or (), repository)
        image.tag(*_split(tag))
        self._untag(name)
        how = f" by digest {known}" if digest else ""
        self._note(logging.INFO, f"pulled {tag}{how} from {self.address} ({image.id[:19]})")
        return Pulled(self.client.images.get(tag), known)

    def push(self, tag: str) -> Pushed:
        """Push the local image `tag`: whether the registry has it now, and its digest there (a failure is logged,
        never raised)."""
        repository, version = self.remote(tag)
        digest = None
        try:
            self.client.images.get(tag).tag(repository, version)
            lines = list(self.client.images.push(repository, tag=version, stream=True, decode=True))
            error = next((str(line["error"]) for line in lines if isinstance(line, dict) and line.get("error")), None)
            digest = pushed_digest(lines)
            if error is None and digest is None:  # read before the transfer name (and its digest) is dropped
                with contextlib.suppress(docker.errors.DockerException):  # pushed all the same: its digest unknown
                    pushed = self.client.images.get(f"{repository}:{version}")
                    digest = repo_digest(pushed.attrs.get("RepoDigests"), repository)
        except docker.errors.DockerException as exc:
            error = _why(exc)
        finally:
            self._untag(f"{repository}:{version}")
        if error:
            self._note(
                logging.WARNING, f"push of {tag} to {self.address} failed (other machines will build it): {error}"
            )
            return Pushed(False)
        self._note(logging.INFO, f"pushed {tag} to {self.address} as {digest or 'an unknown digest'}")
        return Pushed(True, digest)

    def _failed(self, level: int, message: str) -> Pulled:
        self._note(level, message)
        return Pulled(None, problem=message)

    def _untag(self, name: str) -> None:
        """Drop the transfer name only (the image stays under its local name)."""
        with contextlib.suppress(docker.errors.DockerException):
            self.client.images.remove(name, noprune=True)

    def _note(self, level: int, message: str) -> None:
        self.events.append(message)
        log.log(level, "%s", message)


def pushed_digest(lines: Iterable[Any]) -> str | None:
    """The manifest digest a push's decoded stream reports: its `aux.Digest`, else its last `digest:` status line."""
    found = None
    for line in lines:
        if not isinstance(line, dict):
            continue
        aux = line.get("aux")
        if isinstance(aux, dict) and isinstance(aux.get("Digest"), str) and DIGEST.fullmatch(aux["Digest"]):
            return aux["Digest"]
        match = _STATUS_DIGEST.search(str(line.get("status") or ""))
        found = match.group(1) if match else found
    return found


def repo_digest(repo_digests: Iterable[str] | None, repository: str) -> str | None:
    """The digest an image's `RepoDigests` (`<repository>@sha256:…` entries) record for `repository`."""
    for entry in repo_digests or ():
        name, _, digest = str(entry).partition("@")
        if name == repository and DIGEST.fullmatch(digest):
            return digest
    return None


def _split(tag: str) -> tuple[str, str]:
    repository, _, version = tag.rpartition(":") if ":" in tag.rsplit("/", 1)[-1] else (tag, "", "latest")
    return repository, version


def _why(exc: Exception) -> str:
    """The engine's explanation, on one line."""
    text = getattr(exc, "explanation", None) or str(exc)
    return " ".join(str(text).split())[:400]
