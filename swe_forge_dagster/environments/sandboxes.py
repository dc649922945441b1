"""Sandbox configurations as the product makes them: where the language packs meet the kernel's sandboxes.

The kernel (`execution.sandbox`) knows no language: a configuration hands it the variables the image's tools read
a CA bundle from, and the hook that makes a missing image. This module fills both from the packs
(`languages.registry.ca_env_vars`, `toolchain_images.ensure`), and every sandbox the product starts is
configured here, so none silently lacks the CA variables or its toolchain image.
"""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.common.sandbox_spec import SandboxSpec
from swe_forge_dagster.environments import toolchain_images
from swe_forge_dagster.execution.sandbox_config import GIT_CA_ENV_VARS, SandboxConfig
from swe_forge_dagster.languages.registry import ca_env_vars


def sandbox_config(spec: SandboxSpec | None = None, *, build: bool = False, **fields: Any) -> SandboxConfig:
    """One container's configuration: `spec` (the defaults when None; a `SandboxConfig` keeps its labels, env and
    workdir), as `SandboxSpec.for_builds` has it when `build`, with `fields` (labels, env, workdir, or any
    of the spec's) on top, the packs' CA variables and the toolchain images' hook."""
    base = spec or SandboxSpec()
    if build:
        base = base.for_builds()
    values = {**dict(base), **fields, "ca_env_vars": ca_env_vars()}
    values["ensure_image"] = toolchain_images.ensure
    return SandboxConfig.model_validate(values)


def ca_variables() -> tuple[str, ...]:
    """Every variable a sandbox sets to the mounted CA bundle (the packs' tools' and git's): for scripts that set
    up a container outside the sandboxes (`export.eval_script`)."""
    return (*ca_env_vars(), *GIT_CA_ENV_VARS)
