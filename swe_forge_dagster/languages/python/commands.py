"""Python in commands mode (the seed's shell checks, `python -m pytest tests/test_x.py::t`): the test files the
commands name, and the canaries run as one more pair of commands.

An exit code is all that mode has, so code that ends the test process early with status 0 would pass its checks:
the failing canary runs as a command built from a FAIL_TO_PASS command by selecting the canary instead of the
task's test, and it must exit non-zero (`languages.python.canaries`). Pack-private; the harness asks the registry.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from swe_forge_dagster.execution.canaries import Planted
from swe_forge_dagster.languages.pack import CanaryChecks, CommandCanaries
from swe_forge_dagster.languages.python.canaries import Canaries, make_canaries, plant_pytest
from swe_forge_dagster.languages.python.twins import pytest_id, split_params

_SELECTOR = re.compile(r"((?:[\w./-]+/)?[\w.-]+\.py)::[^\s'\"]+")
_QUOTED_SELECTOR = re.compile(r"(['\"]?)((?:[\w./-]+/)?[\w.-]+\.py)::[^\s'\"]+\1")


def command_test_files(commands: Iterable[str]) -> list[str]:
    """Repo-relative `.py` files named in shell check commands (`python -m pytest tests/test_x.py::t`)."""
    files: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words:
            path = word.split("::", 1)[0].removeprefix("/repo/").removeprefix("./")
            if path.endswith(".py") and not path.startswith(("/", "-")) and ".." not in path and path not in files:
                files.append(path)
    return files


def id_files(ids: Sequence[str], fallback: Iterable[str]) -> list[str]:
    """The test files pytest ids name (`tests/test_x.py::t`), else the Python files among `fallback` (empty: none)."""
    files = [test_id.split("::", 1)[0] for test_id in ids]
    if files and all(f.endswith(".py") for f in files):
        return list(dict.fromkeys(f for f in files if f))
    return [f for f in fallback if f.endswith(".py")]


def _repo_path(path: str) -> str:
    return path.removeprefix("/repo/").removeprefix("./")


def canary_file(fail_to_pass: Sequence[str]) -> str | None:
    """The test module the canaries sit next to: the first `path.py::name` a FAIL_TO_PASS command selects."""
    for command in fail_to_pass:
        if match := _SELECTOR.search(command):
            return _repo_path(match.group(1))
    return None


def canary_command(fail_to_pass: Sequence[str], target: str) -> str | None:
    """The first FAIL_TO_PASS command selecting a test of `target`, with that selector turned into
    `{path}::{name}` (the canary's) and every other `file.py::test` selector removed, so it runs the canary
    alone (sanity shows its exit status is the test's)."""
    for command in fail_to_pass:
        matches = list(_QUOTED_SELECTOR.finditer(command))
        chosen = next((m for m in matches if _repo_path(m.group(2)) == target), None)
        if chosen is None:
            continue
        prefix = chosen.group(2)[: len(chosen.group(2)) - len(target)]  # keep a /repo/ or ./ prefix
        parts, last = [], 0
        for match in matches:
            parts.append(command[last : match.start()])
            if match is chosen:
                parts.append(f"{match.group(1)}{prefix}{{path}}::{{name}}{match.group(1)}")
            last = match.end()
        return "".join(parts) + command[last:]
    return None


def selected_ids(command: str) -> list[str]:
    """The pytest ids a command selects (`tests/test_x.py::test_y`, a `/repo/` or `./` prefix dropped)."""
    ids = []
    for match in _QUOTED_SELECTOR.finditer(command):
        quote, path = match.group(1), match.group(2)
        selector = match.group(0)[len(quote) : len(match.group(0)) - len(quote)]
        ids.append(_repo_path(path) + selector[len(path) :])
    return ids


def _plant(fail_to_pass: Sequence[str], read: Callable[[str], bytes]) -> Planted | None:
    """The canary module beside the first selected test's file, and twins of the selected FAIL_TO_PASS tests (as
    `plant_pytest` makes them for a test command), which the run apart writes in place of their originals and runs
    the same commands over."""
    target = canary_file(fail_to_pass)
    if target is None or canary_command(fail_to_pass, target) is None:
        return None
    canaries = make_canaries(target, read(target).decode("utf-8", "replace"))
    ids = [test_id for command in fail_to_pass for test_id in selected_ids(command)]
    by_name = any(split_params(test_id.rpartition("::")[2])[1] for test_id in ids)  # a command naming an instance
    twinned = plant_pytest(command_test_files(fail_to_pass), ids, read, rename=not by_name)  # finds no renamed twin
    return replace(canaries, twins=twinned.twins, parse_id=pytest_id) if twinned is not None else canaries


def _checks(fail_to_pass: Sequence[str], planted: Planted) -> CanaryChecks | None:
    if not isinstance(planted, Canaries):
        return None
    target = canary_file(fail_to_pass)
    probe = canary_command(fail_to_pass, target) if target is not None else None
    if probe is None:
        return None
    probe = probe.replace("{path}", planted.path)
    return CanaryChecks(
        {planted.path: planted.source.encode()},
        probe.replace("{name}", planted.passing),
        probe.replace("{name}", planted.failing),
        f"{planted.path}::{planted.failing}",
    )


COMMAND_CANARIES = CommandCanaries(_plant, _checks, selected_ids)
