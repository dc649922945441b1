"""Where a stage after the environment stage gets its environment image from, and saying so.

The environment stage saves the image's tag and, when it went through a registry, its digest. A
later stage may run on another host (a worker host with its own engine) or after the image was
removed: the image is then pulled by that digest, so the stage runs in exactly the image the
environment stage used. When it cannot be pulled (no registry, the registry unreachable, the digest
gone from it) the image is built here from the saved recipe, which a task's stages can always do:
a task is never lost because its next step landed elsewhere. Which of these happened is the stage's
`image_source` (a fact and a saved field) and a log line, since a build here costs minutes and may
differ from the image the environment stage saw (a newer package on the index).

`first_step` is the decision alone (what to try first, from what is known), `obtain_image` the walk.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)

LOCAL = "local"
PULLED_BY_DIGEST = "pulled by digest"
PULLED_BY_TAG = "pulled by tag"
BUILT_HERE = "built here"
"""`image_source` values: the last one is followed by why the image could not be pulled."""
NO_REGISTRY = "not on this engine and no registry to pull it from (SWE_FORGE_REGISTRY is unset)"


class Step(enum.Enum):
    """The first thing to do for a stage's image."""

    USE = "use"  # on this engine already
    PULL_DIGEST = "pull by digest"
    PULL_TAG = "pull by tag"  # no digest was saved (no registry when the environment stage ran, or an older folder)
    BUILD = "build"  # nothing to pull from


class ImageSources(Protocol):
    """What `obtain_image` needs of `environments.environment.Environments`."""

    @property
    def has_registry(self) -> bool: ...

    def on_engine(self, tag: str) -> bool: ...

    def pull(self, tag: str, digest: str | None = None) -> str | None:
        """Why `tag` (by `digest` when given) could not be pulled; None when it is on this engine now."""
        ...


@dataclass(frozen=True)
class StageImage:
    """The image a stage runs in: its tag (a build here may give another tag than the saved one, e.g. the
    repository's environment image for a layer that was pulled elsewhere), whether it was reused rather than built,
    and where it came from (`image_source`)."""

    tag: str
    cached: bool
    source: str

    @property
    def built_here(self) -> bool:
        return self.source.startswith(BUILT_HERE)


def first_step(on_engine: bool, digest: str | None, registry: bool) -> Step:
    """What to try first for an image: use it, pull it (by digest when one was saved), or build it."""
    if on_engine:
        return Step.USE
    if not registry:
        return Step.BUILD
    return Step.PULL_DIGEST if digest else Step.PULL_TAG


def obtain_image(
    images: ImageSources, tag: str, digest: str | None, build: Callable[[], tuple[str, bool]]
) -> StageImage:
    """The image `tag` (saved with `digest`) on this engine, or the recipe's image built here by `build` (which
    returns (tag, reused), as `Environments.image` does); a build says why no pull served, in its source and the
    log."""
    step = first_step(images.on_engine(tag), digest, images.has_registry)
    if step is Step.USE:
        return StageImage(tag, True, LOCAL)
    if step is Step.BUILD:
        why = NO_REGISTRY
    else:
        problem = images.pull(tag, digest if step is Step.PULL_DIGEST else None)
        if problem is None:
            source = PULLED_BY_DIGEST if step is Step.PULL_DIGEST else PULLED_BY_TAG
            log.info("%s: %s%s", tag, source, f" {digest}" if step is Step.PULL_DIGEST else "")
            return StageImage(tag, True, source)
        why = problem if digest else f"no digest was saved, and {problem}"
    made, reused = build()
    source = built_source(why, made, reused)
    log.warning("%s was not on this engine and could not be pulled: %s", tag, source)
    return StageImage(made, reused, source)


def built_source(why: str, made: str, reused: bool) -> str:
    """The `image_source` of an image made from the recipe: built here, or (`reused`) an image of the recipe the
    build found after all (the repository's image, present or pulled by its tag)."""
    if reused:
        return f"from the recipe, reused {made}: {why}"
    return f"{BUILT_HERE}: {why}"
