"""The Python pack: setup.py/setup.cfg/pyproject.toml repositories, tested with pytest on the local base images.

Its recipes come from the packaging files (`languages.python.recipes`), first as of the commit's era for an old
commit (`languages.python.era`: uv's `--exclude-newer`), then with today's releases; its runner is pytest
(`languages.python.runner`, JUnit read by `execution.junit`), and what an agent may not change is pytest's
configuration and what can replace pytest or its plugins (`languages.python.protection`). The images are the base
images every sandbox starts from (`scripts/build-base-image.sh`), so this pack has no toolchain image of its own.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime

from swe_forge_dagster.execution.era import is_old
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.languages.pack import ConfigProbe, ConfigSections, Files, LanguagePack
from swe_forge_dagster.languages.python import conda
from swe_forge_dagster.languages.python import modules as python_modules
from swe_forge_dagster.languages.python import protection as python_protection
from swe_forge_dagster.languages.python.agent import HINTS, agent_command, proof_module
from swe_forge_dagster.languages.python.commands import COMMAND_CANARIES, command_test_files, id_files
from swe_forge_dagster.languages.python.config import pytest_config
from swe_forge_dagster.languages.python.django import DJANGO_RUNNER
from swe_forge_dagster.languages.python.era import VERSIONS, era_recipe, legacy_build, legacy_install
from swe_forge_dagster.languages.python.extensions import build_requirements
from swe_forge_dagster.languages.python.paths import import_roots
from swe_forge_dagster.languages.python.recipes import (
    BASE_IMAGES,
    MANIFESTS,
    TEST_REQUIREMENTS,
    python_images,
    python_recipes,
)
from swe_forge_dagster.languages.python.runner import PYTEST_RUNNER, plain_pytest
from swe_forge_dagster.languages.python.sympy import SYMPY_RUNNER

DIST_NAME_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
"""Where the distribution's name is read (setuptools-scm's pretend version is scoped to it), in this order."""
DEPENDENCY_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "tox.ini",
)
INDEX_PROBE = "python3 -m pip download --no-deps --retries 0 --timeout 15 -d /tmp/swe-forge-probe pip"
"""Fetches one small package from the package index pip is configured with (the CA bundle mounted as installs see
it): when this fails, every recipe that installs from the index fails too, so none is worth a build."""
SEED_VENV = (
    "python3 -m venv --system-site-packages /tmp/venv && . /tmp/venv/bin/activate "
    "&& (python -c 'import pytest' 2>/dev/null || pip install -q pytest)"
)
"""The seed's Python tasks expect a virtual environment at `/tmp/venv` (their checks call
`/tmp/venv/bin/python -m pytest`); never the system Python, which PEP 668 protects on Debian images."""


def dependency_part(name: str, content: bytes) -> bytes:
    """What of a manifest decides the install: for pyproject.toml its dependency tables (a version bump
    or a tool setting does not make an image stale), for every other manifest all of it."""
    if name != "pyproject.toml":
        return content
    try:
        data = tomllib.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return content
    project, tool = data.get("project") or {}, data.get("tool") or {}
    poetry = tool.get("poetry") or {}
    parts = {
        "build-system": data.get("build-system"),
        "dependency-groups": data.get("dependency-groups"),
        "dependencies": project.get("dependencies"),
        "optional": project.get("optional-dependencies"),
        "poetry": [poetry.get(k) for k in ("dependencies", "dev-dependencies", "group")],
        "pdm": (tool.get("pdm") or {}).get("dev-dependencies"),
    }
    return json.dumps(parts, sort_keys=True, default=str).encode()


def _recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """Today's releases; a build backend without PEP 660 (`languages.python.era.legacy_build`) or a compiled
    setup.py with no declared build requirements (`languages.python.extensions.build_requirements`) without build
    isolation."""
    build = legacy_build(files.get("pyproject.toml")) or build_requirements(files, tree)
    recipes = python_recipes(files, tree, image)
    if build is None:
        return recipes, None
    legacy = [
        replace(r, install_commands=(*r.install_commands[:-1], legacy_install(r.install_commands[-1], build)))
        for r in recipes
    ]
    return legacy, None


def _era_recipes(files: Files, tree: set[str], image: str, committed: datetime | None) -> list[EnvRecipe]:
    """The most specific install as of the commit's era (`languages.python.era`), for a commit older than `ERA_AGE`."""
    recipes = python_recipes(files, tree, image)
    if not recipes or not is_old(committed):
        return []
    assert committed is not None  # is_old
    build = build_requirements(files, tree)
    return [era_recipe(recipes[0], _swap(BASE_IMAGES).get(image, "3.9"), files, committed, build)]


def _images(files: Files) -> list[str]:
    return python_images(files, BASE_IMAGES)


def seed_image(python: str, default_image: str, local: bool) -> str:
    """The image for a seed task that asks for Python `python` (`3.11`): with our local base images, the oldest
    that is not older than it (code written for 3.12 may use syntax 3.11 cannot parse; a later suite's base image
    is built on first need), else the newest; with an official `python:X-slim` default, `python:<version>-slim`;
    else the default."""
    match = re.fullmatch(r"3\.(\d+)(\.\d+)?", python.strip())
    if not match:
        return default_image
    if local:
        wanted = int(match.group(1))
        minors = sorted(int(v.split(".")[1]) for v in BASE_IMAGES)
        chosen = next((minor for minor in minors if minor >= wanted), minors[-1])
        return BASE_IMAGES[f"3.{chosen}"]
    if re.fullmatch(r"python:3\.\d+(-slim|-bookworm|-bullseye)?", default_image):
        return f"python:3.{match.group(1)}-slim"
    return default_image


def seed_install(install: str, python: str) -> str:
    """A Python seed task's install runs in its virtual environment (`SEED_VENV`)."""
    if install and (python or re.search(r"\bpip\b|python", install)):
        return f"{SEED_VENV} && {install}"
    return install


def _pytest_probe(files: tuple[str, ...]) -> Callable[[Sandbox], object]:
    """pytest's effective configuration for the task's test files, read in a box (`languages.python.config`)."""
    return lambda box: pytest_config(box, files)


def _swap(mapping: Mapping[str, str]) -> dict[str, str]:
    return {tag: version for version, tag in mapping.items()}


VENV_PYTHON = "/opt/venv/bin/python"
"""The interpreter of every Python environment (`languages.python.recipes.VENV`, `languages.python.era.UV_VENV`): its
runtime probe asks it, never the system Python that every base image has (a Node environment has no Python runtime of
its own)."""


REVIEW_SIGNS = (
    (r"\b_pytest\b|\bpluggy\b", "imports pytest's internals"),
    (r"^\s*def pytest_\w+\(", "defines a pytest hook"),
    (r"\batexit\b", "runs code at interpreter exit"),
    (r"\bsys\.(?:settrace|setprofile|addaudithook|meta_path|path_hooks)\b", "hooks the interpreter"),
    (r"\._exit\(", "ends the process without cleanup"),
    (r"\b(?:b64decode|b85decode|a85decode|b32decode|unhexlify|decompress|marshal\.loads)\b", "decodes hidden data"),
    (r"\bgc\.get_objects\(", "searches every live object"),
    (r"junit|--junitxml", "names the test report"),
)

PACK = LanguagePack(
    name="python",
    manifests=("setup.py", "setup.cfg", "pyproject.toml"),
    extensions=(".py",),
    runners=(PYTEST_RUNNER, DJANGO_RUNNER, SYMPY_RUNNER),
    hints=HINTS,
    images=_swap(BASE_IMAGES),
    read_files=(*MANIFESTS, *TEST_REQUIREMENTS),
    tree_files=conda.candidate_files,
    dependency_files=DEPENDENCY_FILES,
    recipes=_recipes,
    era_recipes=_era_recipes,
    image_order=_images,
    missing_image="no Python base image is built on this engine",
    protects=python_protection.protects,
    test_code=python_protection.test_code,
    test_file_patterns=python_protection.TEST_FILE_PATTERNS,
    ca_env_vars=("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"),
    seed_languages=("python",),
    seed_rank=2,
    seed_image=seed_image,
    seed_install=seed_install,
    runtime_probe=f"[ ! -x {VENV_PYTHON} ] || {VERSIONS.replace('python -c', f'{VENV_PYTHON} -c', 1)} 2>/dev/null",
    review_signs=REVIEW_SIGNS,
    config_probes={
        PYTEST_RUNNER.name: ConfigProbe(
            _pytest_probe, frozenset(python_protection.CONFIG_FILES), frozenset(python_protection.CONFIG_TRIGGERS)
        )  # its plugins and conftest files are guarded by `protects`: an answer names no file
    },
    config_sections=ConfigSections(python_protection.PYTEST_SECTION_FILES, python_protection.pytest_section),
    module_key=python_modules.module_key,
    import_roots=import_roots,
    new_modules=python_modules.new_modules,
    command_files=command_test_files,
    id_files=id_files,
    plain_command=plain_pytest,
    command_canaries=COMMAND_CANARIES,
    agent_command=agent_command,
    proof_file=proof_module,
    dist_name_files=DIST_NAME_FILES,
    dependency_part=dependency_part,
    install_outputs=("*.egg-info",),
    index_probe=INDEX_PROBE,
)
