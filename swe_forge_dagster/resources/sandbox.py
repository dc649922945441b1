"""The sandbox specification as Dagster configuration: what the `harness` and `tasks` resources nest under `sandbox`.

It is `common.sandbox_spec.SandboxSpec` itself (its fields, defaults and checks, written once there), made a Dagster
`Config` so that the launchpad shows and validates it; only the CA bundle is text here, since Dagster's config
has no paths.
"""

from __future__ import annotations

from typing import Self

import dagster as dg
from pydantic import Field

from swe_forge_dagster.common.sandbox_spec import SandboxSpec


class SandboxResourceConfig(dg.Config, SandboxSpec):
    """A `SandboxSpec` in a resource's config (`sandbox: {image, cpu, mem_limit, ...}`)."""

    ca_bundle: str | None = Field(default=None, description="host CA file mounted into the containers")  # type: ignore[assignment]

    @classmethod
    def of(cls, spec: SandboxSpec) -> Self:
        """`spec` as resource configuration (the settings' spec, in `definitions.build_resources`)."""
        return cls.model_validate(spec.model_dump(mode="json"))

    @property
    def spec(self) -> SandboxSpec:
        """The specification the domain code takes."""
        return SandboxSpec.model_validate(self.model_dump())
