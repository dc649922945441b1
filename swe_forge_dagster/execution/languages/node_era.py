"""Era-true Node environments: a package without a lock file resolved as of its base commit (npm's `before`).

`npm install` with no lock file takes today's release of every range in package.json, and a 2021 package's tests
were run with 2021's (a mocha, chai or jest major later changes what its tests see). npm resolves as of a date
with `before` (`npm_config_before`): the newest version published on or before it. A lock file wins: it pins
what the repository was tested with (`npm ci`, or yarn's/pnpm's), so no era recipe is made for one.

`before` is only as true as the registry's publish times. A mirror or proxy that rewrote them (the registry
reachable from this machine gives semver 1.0.0 a 2025 date and no `time.created`) would make an old date find no
version at all, so the recipe first asks the registry for one direct dependency's `time.created` (present in
every packument of the public registry): absent, it installs today's releases and records why
(`resolution-date=none`, `resolution-note=...`), and the environment counts as found by `manifest`, not by its
era. The install itself is today's recipe's, so the ladder after it (without install scripts, then the agent)
is unchanged.

Pack-private (`languages.node` is the pack).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from datetime import datetime

from swe_forge_dagster.execution.era import RESOLUTION_VAR, RUNG, iso_utc
from swe_forge_dagster.execution.recipe import ENV_DIR, RUNTIME_FILE, EnvRecipe

LOCK_FILES = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml")
"""Files that pin the dependencies: with one, the install takes what it pins, not a date."""
PACKAGE_NAME = re.compile(r"(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")
"""npm's package name grammar (what `npm view` is asked about: a name from the repository, checked first)."""
RUNG_VAR = "SWE_FORGE_RUNG"
RECORD_SCRIPT = f"{ENV_DIR}/record"
NOT_PLAUSIBLE = "the registry's publish times are not plausible (no time.created): today's releases"
RECORD = (
    f"printf 'node-version=%s\\nnpm-version=%s\\nresolution-date=%s\\nrung=%s\\n' "
    f'"$(node -v | tr -d v)" "$(npm -v)" "${{{RESOLUTION_VAR}:-none}}" "${RUNG_VAR}" > {RUNTIME_FILE}\n'
    f'[ -n "${RESOLUTION_VAR}" ] || echo "resolution-note={NOT_PLAUSIBLE}" >> {RUNTIME_FILE}\n'
)
"""Run after the install: what it resolved, into `RUNTIME_FILE` (the build labels the image with it)."""


def probe_package(package: Mapping[str, object]) -> str | None:
    """The direct dependency whose publish times are checked: the first well-formed name, devDependencies first."""
    for field in ("devDependencies", "dependencies"):
        names = package.get(field)
        if isinstance(names, Mapping):
            for name in sorted(str(n) for n in names):
                if PACKAGE_NAME.fullmatch(name):
                    return name
    return None


def date_step(probe: str, committed: datetime) -> str:
    """Exports `RESOLUTION_VAR` (and npm's `before`) as the commit's date when the registry's times are plausible,
    else leaves it empty; writes the record script the install runs last. One line: an exported task joins the
    steps with `&&`."""
    check = f"npm view {shlex.quote(probe)} time.created 2>/dev/null"
    return (
        f"export {RESOLUTION_VAR}={iso_utc(committed)} {RUNG_VAR}={RUNG} && "
        f'{{ [ -n "$({check})" ] && export npm_config_before="${RESOLUTION_VAR}" '
        f"|| {RESOLUTION_VAR}= {RUNG_VAR}=manifest; }} "
        f"&& mkdir -p {ENV_DIR} && printf '%s' {shlex.quote(RECORD)} > {RECORD_SCRIPT}"
    )


def era_recipe(today: EnvRecipe, probe: str, committed: datetime) -> EnvRecipe:
    """`today` (one `npm install ...`) resolved as of the commit's date when the registry allows it."""
    (install,) = today.install_commands
    steps = (date_step(probe, committed), f"{install} && sh {RECORD_SCRIPT}")
    return EnvRecipe(steps, today.test_command, today.base_image)
