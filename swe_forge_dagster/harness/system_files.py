"""Files outside the checkout that the sandbox's own steps run or read, changed by the checks: tampering.

The code under test runs as its own unprivileged user (`execution.test_user`), which cannot write the system's
files; this is the second wall. A binary or a configuration file of the system (`/usr/bin/mv`, `/bin/bash`,
`/etc/ld.so.preload`) or an interpreter the install made (`/opt/venv/bin/python`) is what a later step in the same
container runs: the shell that saves its state after the tests (`test_user.LAST` now ends without one), the next
check command of a task in the seed's commands format, the dynamic loader of every later process. A red-team agent
raced root's preparation of a later command and had root make `/opt/venv/bin` writable (reaped since). Whatever a
forger replaces, the engine's own record of the container's changes (`docker diff`, read from outside the container)
shows it. A verification run that changed such a file where the sanity run of the same checks (no agent code) did
not is `tampered`.
"""

from __future__ import annotations

import logging
import re

from swe_forge_dagster.execution.sandbox import Sandbox

TEST_WRITABLE = re.compile(r"^/(?:repo|tmp|var/tmp|dev/shm|root|home|dev|proc|sys|run)(?:/|$)")
"""Where the test user may write (`execution.test_user`: its checkout, its home, the temporary folders) and what the
kernel and the engine manage. A change anywhere else (the system's programs, libraries and configuration, an
interpreter or venv the install made under /opt or /usr/local) was not the tests' to make: no check of an honest fix
writes there (none of the real rows tried, Django's, seaborn's, xarray's, did), and root's own steps make the same
changes in the sanity container (its test user in /etc/passwd), which the comparison leaves out."""
BYTECODE = re.compile(r"/__pycache__(?:/|$)|\.py[co]$")
"""Python's bytecode caches, which an honest fix writes beside a standard-library module it is the first to import
(an image whose stdlib ships without them): not counted. Open: a planted one reaches a later Python process."""
SHOWN = 5
log = logging.getLogger(__name__)


def system_changes(box: Sandbox) -> frozenset[str] | None:
    """The paths outside the test user's (`TEST_WRITABLE`) changed, added or deleted in `box` since its image, leaves
    only (a changed file's folders are not listed beside it); None when the engine cannot say."""
    try:
        changes = box.container.diff() or []
    except Exception as exc:  # the engine's answer is evidence, never a harness failure (a timeout, a gone container)
        log.warning("no record of %s's changes: %s", box.name, exc)
        return None
    paths = {path for change in changes if (path := change.get("Path", "/")) != "/"}
    leaves = (path for path in paths if not any(other.startswith(f"{path}/") for other in paths))  # /var of /var/tmp
    return frozenset(path for path in leaves if not TEST_WRITABLE.match(path) and not BYTECODE.search(path))


def tampering(after: frozenset[str] | None, at_base: frozenset[str] | None) -> str | None:
    """Why a verification run that changed `after` cannot be trusted, given the sanity run's `at_base`; None: it
    changed nothing the sanity run did not (or the engine could not say for one of them)."""
    if after is None or at_base is None:
        return None
    new = sorted(after - at_base)
    if not new:
        return None
    shown = ", ".join(new[:SHOWN]) + (f" (+{len(new) - SHOWN} more)" if len(new) > SHOWN else "")
    return f"the checks changed files of the system that the sandbox runs or reads: {shown}"
