"""Where the checks' Python imports top-level modules from: the directories of /repo on its import path.

A new module at the top of such a directory (`idna.py` or `pygments/` at the repository root, `_distutils_hack.py`
in `src/`) is imported in place of an installed module of that name, or by an optional import of the interpreter,
the runner or a dependency at start-up, so it runs code before any test. Which names those are cannot be listed
(every package's dependencies and optional imports differ), so the harness drops every new top-level module in
these directories, whatever its name (`harness.protection.new_top_level_modules`). They are asked of the
environment's own interpreter in the sanity container, where no agent code ever ran, in isolated mode (`python -I`:
what `.pth` files of the environment add, such as an editable install's `src/`), plus the repository root (the
current directory of `python -m pytest`), the directories pytest's default `prepend` import mode inserts for the
test files and `conftest.py` files (the first directory up from each that is not a package), and a `PYTHONPATH`
the test command sets.

Pack-private to the Python pack (`languages.python`); the harness calls it for runners that run in process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.languages.python.config import isolated_probe

ROOTS_PROBE = f"""import json, os, sys
repo = {REPO_DIR!r}
roots = {{p for p in sys.path if p == repo or p.startswith(repo + "/")}} | {{repo}}
files = [os.path.join(repo, f) for f in sys.argv[1:]]
for top, dirs, names in os.walk(repo):
    dirs[:] = [d for d in dirs if d not in (".git", "node_modules", "__pycache__") and not d.startswith(".")]
    files += [os.path.join(top, "conftest.py")] if "conftest.py" in names else []
for path in files:
    d = os.path.dirname(path)
    while d != repo and os.path.isfile(os.path.join(d, "__init__.py")):
        d = os.path.dirname(d)
    roots.add(d)
print(json.dumps(sorted("" if r == repo else os.path.relpath(r, repo) for r in roots)))
"""
PROBE_PATH = f"{WORK_DIR}/import-roots-probe.py"
_PYTHONPATH = re.compile(r"(?:^|\s)PYTHONPATH=(\S+)")


def import_roots(box: Sandbox, files: Sequence[str], test_command: str = "") -> list[str] | None:
    """The repo-relative directories ('' = the root) the checks import top-level modules from, or None when the
    environment's `python` cannot say (no Python here)."""
    found = isolated_probe(box, PROBE_PATH, ROOTS_PROBE, files)
    if not isinstance(found, list):
        return None
    roots = {str(root) for root in found}
    for match in _PYTHONPATH.finditer(test_command):
        for entry in match.group(1).strip("'\"").split(":"):
            entry = entry.removeprefix(f"{REPO_DIR}/").removeprefix("./").rstrip("/")
            roots.add("" if entry in (".", REPO_DIR, "$PWD") else entry)
    return sorted(str(root) for root in roots)
