"""A test runner's effective configuration, computed by the runner's own code, to compare before and after a diff.

Our reading of configuration files can differ from the runner's (an ini line we take for a section
header is a continuation line to pytest's parser; a new `pytest.ini` in a subdirectory moves the
rootdir), and any such difference is a way to change how the checks run without touching a file we
protect. So the verification container asks the runner itself: for pytest,
`_pytest.config.findpaths.determine_setup` (what `pytest` calls at start-up) gives the rootdir, the
config file it picked and every value in it (`addopts` with its `-p` plugins, `python_files`,
`testpaths`, `confcutdir`, ...) for the files the checks will run. It parses files only: no
conftest, plugin or project module is imported, and it runs in isolated mode (`python -I`: no
current directory on `sys.path`, no `PYTHON*` variables), so the repository cannot answer for it.

Pack-private to the Python pack (`languages.python`); the harness calls it for runners that run in process.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR, exec_demux, put_files
from swe_forge_dagster.execution.sandbox import Sandbox

PYTEST_PROBE = """import inspect, json, sys
from pathlib import Path
try:
    from _pytest.config.findpaths import determine_setup
except Exception as exc:  # no pytest in this environment
    print(json.dumps({"unavailable": repr(exc)}))
    raise SystemExit(0)
wanted = {"inifile": None, "override_ini": None, "args": sys.argv[1:], "rootdir_cmd_arg": None,
          "invocation_dir": Path.cwd(), "config": None}
params = inspect.signature(determine_setup).parameters
found = determine_setup(**{name: wanted[name] for name in params if name in wanted})
rootdir, inipath, inicfg = found[0], found[1], found[2]
values = {key: getattr(value, "value", value) for key, value in dict(inicfg or {}).items()}
print(json.dumps({"rootdir": str(rootdir), "inifile": str(inipath) if inipath else None, "ini": values},
                 sort_keys=True, default=repr))
"""
PROBE_PATH = f"{WORK_DIR}/pytest-config-probe.py"


def isolated_probe(box: Sandbox, path: str, script: str, files: Sequence[str]) -> Any:
    """Run `script` (written to `path`) with the environment's python in isolated mode in `box`'s /repo, the test
    files as arguments; the JSON of its last output line, or None when it failed."""
    put_files(box, {path: script.encode()})
    args = " ".join(shlex.quote(name) for name in files)
    # The environment's python (its venv is on PATH in the image), isolated from /repo as described above.
    exit_code, stdout, _stderr = exec_demux(box, ["bash", "-c", f"cd {REPO_DIR} && python -I {path} {args}"])
    if exit_code != 0:
        return None
    try:
        return json.loads(stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def pytest_config(box: Sandbox, files: Sequence[str]) -> dict[str, Any] | None:
    """pytest's effective configuration for `files` in `box`'s /repo, or None when it cannot be computed
    (no pytest importable by the environment's `python`, or the probe failed)."""
    found = isolated_probe(box, PROBE_PATH, PYTEST_PROBE, files)
    return None if not isinstance(found, dict) or "unavailable" in found else found
