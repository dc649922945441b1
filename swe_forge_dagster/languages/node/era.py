"""Era-true Node environments: a package without a lock file resolved as of its base commit (npm's `before`).

`npm install` with no lock file takes today's release of every range in package.json, and a 2021 package's tests
were run with 2021's (a mocha, chai or jest major later changes what its tests see). npm resolves as of a date
with `before` (`npm_config_before`): the newest version published on or before it. A lock file that `npm install`
reads wins (`package-lock.json`, `npm-shrinkwrap.json`, and `yarn.lock`, which npm 7+ reads too): it pins what the
repository was tested with, so no era recipe is made for one.

`before` is only as true as the registry's publish times. A mirror or proxy that rewrote them (the registry
reachable from this machine gives semver 1.0.0 a 2025 date and no `time.created`) would make an old date find no
version at all, so before any era recipe is made the host asks the registry once per process for the package's
test runner's packument (`dates_plausible`: `time.created` present, as in every packument of the public
registry); without it no era recipe is made, and the ladder starts with today's releases. `before` is given to
the install alone (not exported), so it never reaches the image's environment, where the tests and agents run npm.

Pack-private (`languages.node` is the pack).
"""

from __future__ import annotations

import functools
import logging
import re
import shlex
from datetime import datetime

import httpx

from swe_forge_dagster.execution.era import RESOLUTION_VAR, RUNG, iso_utc
from swe_forge_dagster.execution.recipe import ENV_DIR, RUNTIME_FILE, EnvRecipe
from swe_forge_dagster.settings import get_settings

log = logging.getLogger(__name__)
LOCK_FILES = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock")
"""Lock files `npm install` reads: with one, the install takes what it pins, not a date."""
PACKAGE_NAME = re.compile(r"(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")
"""npm's package name grammar (a name asked about must be one)."""
RECORD_SCRIPT = f"{ENV_DIR}/record"
RECORD = (
    f"printf 'node-version=%s\\nnpm-version=%s\\nresolution-date=%s\\nrung={RUNG}\\n' "
    f'"$(node -v | tr -d v)" "$(npm -v)" "${RESOLUTION_VAR}" > {RUNTIME_FILE}\n'
)
"""Run after the install: what it resolved, into `RUNTIME_FILE` (the build labels the image with it)."""


@functools.lru_cache(maxsize=64)
def dates_plausible(package: str, registry: str | None = None, timeout: float = 10.0) -> bool:
    """Whether the registry's packument of `package` has `time.created` (its publish times can be trusted), asked
    from this host once per process; False when it cannot be asked (no era recipe then, today's releases)."""
    base = (registry or get_settings().npm_registry).rstrip("/")
    if not PACKAGE_NAME.fullmatch(package):
        return False
    bundle = get_settings().ca_bundle
    try:
        with httpx.Client(timeout=timeout, verify=str(bundle) if bundle else True) as client:
            answer = client.get(f"{base}/{package.replace('/', '%2F')}")
            created = (answer.json().get("time") or {}).get("created") if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        created = None
    if not created:
        log.info("npm registry %s: no time.created for %s, so no era-true resolution (today's releases)", base, package)
    return bool(created)


def era_recipe(today: EnvRecipe, committed: datetime) -> EnvRecipe:
    """`today` (one `npm install ...`) resolved as of the commit's date; every step one line (an exported task
    joins them with `&&`)."""
    (install,) = today.install_commands
    date = (
        f"export {RESOLUTION_VAR}={iso_utc(committed)} && mkdir -p {ENV_DIR} "
        f"&& printf '%s' {shlex.quote(RECORD)} > {RECORD_SCRIPT}"
    )
    dated = f'npm_config_before="${RESOLUTION_VAR}" {install} && sh {RECORD_SCRIPT}'
    return EnvRecipe((date, dated), today.test_command, today.base_image)
