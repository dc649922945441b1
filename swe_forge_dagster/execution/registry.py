"""Environment images shared through an image registry (`SWE_FORGE_REGISTRY`, e.g. `127.0.0.1:5000`).

An environment image takes minutes to build and exists only on the engine that built it. With a
registry, `Environments` pulls an image before building it and pushes what it built, so a second
machine (or a run container on another host) starts warm. The image keeps its local name
(`swe-forge-env/<repo>:<recipe>`): the registry name is only a transfer name, untagged again
after each pull and push, so the rest of the execution layer never sees it.

The registry is an accelerator, never a requirement: a pull that fails (image absent, registry
down, TLS refused) is logged with its reason and the image is built; a failed push is logged and
the build still counts. Docker allows plain-HTTP registries on 127.0.0.0/8 by default; another
address needs TLS or the engine's `insecure-registries`.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field

import docker

from swe_forge_dagster.common.registry_address import REGISTRY_SETTING, RegistryConfigError, parse_registry

log = logging.getLogger(__name__)

__all__ = ["REGISTRY_SETTING", "ImageRegistry", "RegistryConfigError", "parse_registry"]


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

    def pull(self, tag: str) -> docker.models.images.Image | None:
        """The image `tag`, pulled from the registry and tagged locally, or None (reason logged)."""
        repository, version = self.remote(tag)
        try:
            image = self.client.images.pull(repository, tag=version)
        except docker.errors.NotFound as exc:
            self._note(logging.INFO, f"pull of {repository}:{version} found nothing, building instead: {_why(exc)}")
            return None
        except docker.errors.DockerException as exc:
            self._note(logging.WARNING, f"pull of {repository}:{version} failed, building instead: {_why(exc)}")
            return None
        image.tag(*_split(tag))
        self._untag(f"{repository}:{version}")
        self._note(logging.INFO, f"pulled {tag} from {self.address} ({image.id[:19]})")
        return self.client.images.get(tag)

    def push(self, tag: str) -> bool:
        """Push the local image `tag`; whether the registry has it now (a failure is logged, never raised)."""
        repository, version = self.remote(tag)
        try:
            self.client.images.get(tag).tag(repository, version)
            error = None
            for line in self.client.images.push(repository, tag=version, stream=True, decode=True):
                if isinstance(line, dict) and line.get("error"):
                    error = str(line.get("error"))
        except docker.errors.DockerException as exc:
            error = _why(exc)
        finally:
            self._untag(f"{repository}:{version}")
        if error:
            self._note(
                logging.WARNING, f"push of {tag} to {self.address} failed (other machines will build it): {error}"
            )
            return False
        self._note(logging.INFO, f"pushed {tag} to {self.address}")
        return True

    def _untag(self, name: str) -> None:
        """Drop the transfer name only (the image stays under its local name)."""
        with contextlib.suppress(docker.errors.DockerException):
            self.client.images.remove(name, noprune=True)

    def _note(self, level: int, message: str) -> None:
        self.events.append(message)
        log.log(level, "%s", message)


def _split(tag: str) -> tuple[str, str]:
    repository, _, version = tag.rpartition(":") if ":" in tag.rsplit("/", 1)[-1] else (tag, "", "latest")
    return repository, version


def _why(exc: Exception) -> str:
    """The engine's explanation, on one line."""
    text = getattr(exc, "explanation", None) or str(exc)
    return " ".join(str(text).split())[:400]
