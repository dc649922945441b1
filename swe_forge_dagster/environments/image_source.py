"""Where a stage after the environment stage gets its environment image from, and saying so.

The environment stage saves the image's tag and, when it went through a registry, its digest. A
later stage may run on another host (a worker host with its own engine) or after the image was
removed: the image is then pulled by that digest, so the stage runs in exactly the image the
environment stage used. When it cannot be pulled (no registry, the registry unreachable, the digest
gone from it) the image is built here from the saved recipe, which a task's stages can always do:
a task is never lost because its next step landed elsewhere. Which of these happened is the stage's
`image_source` (a fact and a saved field) and a log line, since a build here costs minutes and may
differ from the image the environment stage saw (a newer package on the index).

Whatever the image's origin, the recipe's own check (`Environments.image`: the dependency manifests the image
was made for) decides whether it serves, as it did before worker hosts.
"""

from __future__ import annotations

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


def obtain_image(
    images: ImageSources, tag: str, digest: str | None, recipe_image: Callable[[], tuple[str, bool]]
) -> StageImage:
    """The image of a stage after the environment stage, and where it came from.

    `recipe_image` (`Environments.image` for the saved recipe at the task's base commit, returning (tag, reused)) is
    the one judge of whether an image here holds the task's dependencies, as before worker hosts: its deps label, a
    layer over it when they changed, a build when nothing serves. A tag on this engine may hold another task's or
    another host's build of the same recipe, so it is never used unjudged. When the saved tag is not here, it is
    first pulled by the saved digest (by its tag when none was saved), so that the judge finds exactly the
    environment stage's image rather than building it again; a build here says why no pull served, in its source and
    the log."""
    seeded, why = None, None
    if not images.on_engine(tag):
        if not images.has_registry:
            why = NO_REGISTRY
        elif (problem := images.pull(tag, digest)) is None:
            seeded = PULLED_BY_DIGEST if digest else PULLED_BY_TAG
            log.info("%s: %s%s", tag, seeded, f" {digest}" if digest else "")
        else:
            why = problem if digest else f"no digest was saved, and {problem}"
    made, reused = recipe_image()
    if why is not None:
        source = built_source(why, made, reused)
        log.warning("%s was not on this engine and could not be pulled: %s", tag, source)
    elif not reused:
        source = f"{BUILT_HERE}: {tag} ({seeded or LOCAL}) was made for other dependency manifests than this commit's"
        log.warning("%s", source)
    elif made != tag:
        source = f"{seeded or LOCAL}, with {made}: the layer of this commit's dependency manifests"
    else:
        source = seeded or LOCAL
    return StageImage(made, reused, source)


def built_source(why: str, made: str, reused: bool) -> str:
    """The `image_source` of an image made from the recipe: built here, or (`reused`) an image of the recipe the
    build found after all (the repository's image, present or pulled by its tag)."""
    if reused:
        return f"from the recipe, reused {made}: {why}"
    return f"{BUILT_HERE}: {why}"
