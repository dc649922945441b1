"""What an environment install runs besides the recipe's commands, and what it leaves as labels.

The tree of an environment build has no `.git` (`repo_box.write_tree_archive`), so a project that takes
its version from git (setuptools-scm, hatch-vcs, versioneer) gets it from a pretended version and a
one-commit history at its release tag; the facts the install wrote become image labels. Kept apart
from `environment` (which builds and shares the images) and used by the exported task repositories'
scripts too, so the image and a SWE-bench `install.sh` prepare an install alike. `pretend_version`'s
source and `install_git_script`'s output are part of `environment.build_procedure`: an edit to them
retags every environment image.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from swe_forge_dagster.execution.repo_box import GIT
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.registry import dist_name_files

__all__ = ["PRETEND_VERSION", "install_git_script", "pretend_version", "runtime_labels"]

PRETEND_VERSION = "SETUPTOOLS_SCM_PRETEND_VERSION"
"""Read by setuptools-scm (and hatch-vcs, which uses it) when there is no git metadata; `_FOR_<DIST>` scopes it
to one distribution, so dependencies built from sdists keep their own versions."""


def pretend_version(cache: RepoCache, repo: str, sha: str) -> str:
    """`NAME=version` for the install: the tree has no .git, so a setuptools-scm / hatch-vcs project gets the
    version git would give it (its release tag), scoped to its own distribution when its name is known."""
    version = cache.release_version(repo, sha) or "0.0.0"
    name = None
    for manifest in dist_name_files():
        text = (cache.show_file(repo, sha, manifest) or b"").decode("utf-8", "replace")
        match = re.search(r"(?m)^\s*name\s*=\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)", text)
        if match:
            name = match.group(1)
            break
    suffix = f"_FOR_{re.sub(r'[^A-Za-z0-9]+', '_', name).upper()}" if name else ""
    return f"{PRETEND_VERSION}{suffix}={shlex.quote(version)}"


def runtime_labels(text: str) -> dict[str, str]:
    """`swe-forge.<name>` labels from the `name=value` lines an install wrote (`recipe.RUNTIME_FILE`)."""
    labels = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and re.fullmatch(r"[a-z][a-z0-9.-]{0,40}", name) and value.strip():
            labels[f"swe-forge.{name}"] = value.strip()[:200]
    return labels


def install_git_script(tags: Sequence[str]) -> str:
    """A one-commit `.git` in /repo, tagged with the release's names (`RepoCache.release_tags`), for the install to
    read.

    setuptools-scm, hatch-vcs, versioneer and the like compute the version from git metadata; the
    pretend-version variable covers only those that know their distribution name (hatch-vcs does
    not pass it), so the install sees the history git would show at a release: the tag at HEAD, under upstream's
    name (versioneer matches its `tag_prefix`) and as a bare version. No git in the image: nothing (the variable
    alone then).
    """
    git = " ".join(GIT)
    tag = "".join(f" && {git} tag {shlex.quote(name)}" for name in tags)
    return (
        f"command -v git >/dev/null 2>&1 && (cd /repo && {git} init -q && {git} add -A -f && "
        f"{git} commit -q --no-verify --allow-empty -m base{tag}) >/dev/null 2>&1; cd /repo"
    )
