"""The Python pack's recipes: derived from a Python repository's own files, before any LLM is asked.

Most Python repositories say how to install them for testing: an extra named `tests`/`test`/
`testing`/`dev` (setup.py's `extras_require`, setup.cfg's `[options.extras_require]`,
pyproject's `[project.optional-dependencies]`, tox's `extras =`), or a test requirements file.
`python_recipes` turns those into candidate recipes, most specific first; each installs into a
virtual environment (`/opt/venv`: never the system Python, which PEP 668 protects on Debian
images) and is proven by building the image and running the tests, by the caller.

Which Python: `python_images` reads what the repository declares (tox envlist `py37`,
trove classifiers `Python :: 3.7`, `python_requires`/`requires-python`) and orders the local base
images (`BASE_IMAGES`, one per Debian suite: bullseye 3.9, bookworm 3.11, trixie 3.13): old code (its newest
declared Python older than the default's) the oldest it accepts first, so a 2019 project gets 3.9 before 3.11,
newer code nearest first to the newest version it declares; a caller tries the next one when the suite does
not start (import or syntax errors of an old code base on a new Python).

Pack-private (`languages.python` is the pack).
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterable, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.languages.python.conda import conda_dependencies, optional_installs
from swe_forge_dagster.languages.python.extensions import compiles, with_build_tools
from swe_forge_dagster.languages.python.pyproject import toml
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.languages.python.suites import own_runner_command, own_runner_setup
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

BASE_IMAGES = {"3.11": DEFAULT_BASE_IMAGE, "3.9": "swe-forge-base:bullseye", "3.13": "swe-forge-base:trixie"}
"""Python version -> the local base image that has it (`scripts/build-base-image.sh`), the default first."""

PYTHON_VERSION_FILE = ".python-version"
MANIFESTS = ("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "tox.toml", PYTHON_VERSION_FILE)
"""The files `python_recipes` and `python_images` read (the caller passes their text at the base commit)."""
TEST_EXTRAS = ("tests", "test", "testing", "dev")
TEST_REQUIREMENTS = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
)
EDITABLE = "--config-settings editable_mode=compat -e"
"""An editable install whose source tree is on sys.path (a `.pth` line), as `setup.py develop` made them: setuptools'
default for some layouts is an import hook instead, which hides the tree from code that finds modules by path
(astroid's `modpath_from_file`, so pylint started outside /repo loads none of its checkers: 12 of pylint-7080's
PASS_TO_PASS fail). Other build backends ignore the setting."""
VENV = "python3 -m venv /opt/venv && . /opt/venv/bin/activate && python -m pip install -q --upgrade pip"


def python_recipes(manifests: Mapping[str, str], tree: set[str], base_image: str) -> list[EnvRecipe]:
    """Candidate recipes for a Python repository, most specific first (empty: not a Python project)."""
    if not any(name in manifests for name in ("setup.py", "setup.cfg", "pyproject.toml")):
        return []
    installs: list[str] = []
    tox_groups, tox_extras = _tox_toml(manifests.get("tox.toml"))
    tox_extras = _tox_extras(manifests.get("tox.ini")) or tox_extras  # what the project's own test runs install
    tox_groups, tox_extras = _names(tox_groups), list(dict.fromkeys(_names(tox_extras)))  # they reach a shell
    groups = set(_names(_dependency_groups(manifests.get("pyproject.toml"))))
    wanted = [g for g in tox_groups if g in groups] or [next((g for g in TEST_EXTRAS if g in groups), "")]
    if any(wanted):  # PEP 735 groups: `pip install --group` (pip >= 25.1, which the venv step upgrades to)
        target = f"'.[{','.join(tox_extras)}]'" if tox_extras else "."
        installs.append(f"pip install {EDITABLE} {target} {' '.join(f'--group {g}' for g in wanted)} pytest")
    if tox_extras:
        installs.append(f"pip install {EDITABLE} '.[{','.join(tox_extras)}]' pytest")
    declared = declared_extras(manifests)
    extra = next((name for name in TEST_EXTRAS if name in declared), None)
    if extra:
        installs.append(f"pip install {EDITABLE} '.[{extra}]' pytest")
    for requirements in TEST_REQUIREMENTS:
        if requirements in tree:
            installs.append(f"pip install -r {requirements} {EDITABLE} . pytest")
    installs.append(f"pip install {EDITABLE} . pytest")
    command = own_runner_command(tree) or PYTEST
    versions, _ = declared_pythons(manifests)
    setup = "".join(f" && {step}" for step in own_runner_setup(command, min(versions, default=None)))
    setup = _conda_tests(manifests) + setup
    build = with_build_tools if compiles(manifests, tree) else tuple
    return [EnvRecipe(build((VENV, install + setup)), command, base_image) for install in dict.fromkeys(installs)]


def _conda_tests(manifests: Mapping[str, str]) -> str:
    """` && <each test dependency of the repository's conda environment file>` (`languages.python.conda`), or ""."""
    found = conda_dependencies({path: text for path, text in manifests.items() if path.endswith((".yml", ".yaml"))})
    return f" && {optional_installs(found[1])}" if found and found[1] else ""


NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
"""PEP 508's grammar of an extra's or a dependency group's name: what may be written into an install command."""


def _names(names: Iterable[str]) -> list[str]:
    """The well-formed names (`NAME`), in order: any other text from the repository never reaches the shell."""
    return [name for name in names if NAME.fullmatch(name)]


def declared_extras(manifests: Mapping[str, str]) -> set[str]:
    """Every extra the packaging files (and tox's `extras =`) name."""
    found: set[str] = set()
    setup_py = manifests.get("setup.py")
    if setup_py:
        found |= _setup_py_extras(setup_py)
    cfg = _ini(manifests.get("setup.cfg"))
    if cfg is not None and cfg.has_section("options.extras_require"):
        found |= set(cfg.options("options.extras_require"))
    pyproject = toml(manifests.get("pyproject.toml"))
    found |= set(((pyproject.get("project") or {}).get("optional-dependencies") or {}).keys())
    return found | set(_tox_extras(manifests.get("tox.ini")))


def _dependency_groups(pyproject: str | None) -> set[str]:
    """The PEP 735 `[dependency-groups]` of pyproject.toml."""
    return set((toml(pyproject).get("dependency-groups") or {}).keys())


def _tox_toml(text: str | None) -> tuple[list[str], list[str]]:
    """(dependency groups, extras) that tox.toml's `env_run_base` installs for the test runs."""
    base = toml(text).get("env_run_base") or {}
    groups, extras = base.get("dependency_groups") or [], base.get("extras") or []
    return (
        [g for g in groups if isinstance(g, str)] if isinstance(groups, list) else [],
        [e for e in extras if isinstance(e, str)] if isinstance(extras, list) else [],
    )


def _tox_extras(text: str | None) -> list[str]:
    """The extras of tox's main `[testenv]` (what the project's CI installs to run its tests)."""
    tox = _ini(text)
    value = tox.get("testenv", "extras", fallback="") if tox is not None and tox.has_section("testenv") else ""
    return [item.strip() for item in re.split(r"[,\s]+", value) if item.strip() and not set(item) & set("{}:!")]


def declared_pythons(manifests: Mapping[str, str]) -> tuple[list[tuple[int, int]], SpecifierSet | None]:
    """(the 3.x versions the repository says it supports, its requires-python specifier or None): trove
    classifiers, tox's envlist, `.python-version`; the specifier from requires-python / python_requires."""
    text = "\n".join(manifests.get(name, "") for name in MANIFESTS)
    versions = {(3, int(minor)) for minor in re.findall(r"Programming Language :: Python :: 3\.(\d+)", text)}
    tox = _ini(manifests.get("tox.ini"))
    if tox is not None and tox.has_option("tox", "envlist"):
        envlist = tox.get("tox", "envlist")
        braced = ",".join(re.findall(r"\bpy\{([^}]*)\}", envlist))  # py{39,38,37,py3}
        minors = ",".join(re.findall(r"\bpy3\{([^}]*)\}", envlist))  # py3{8,9,10}
        found = re.findall(r"\bpy3(\d+)\b", envlist) + re.findall(r"(?:^|,)\s*3(\d+)\s*(?=,|$)", braced)
        found += re.findall(r"(?:^|,)\s*(\d+)\s*(?=,|$)", minors)
        versions |= {(3, int(minor)) for minor in found}
    pinned = re.match(r"\s*3\.(\d+)", manifests.get(PYTHON_VERSION_FILE, ""))
    if pinned:
        versions.add((3, int(pinned.group(1))))
    spec_text = (toml(manifests.get("pyproject.toml")).get("project") or {}).get("requires-python")
    if not spec_text:
        match = re.search(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]", manifests.get("setup.py", ""))
        cfg = _ini(manifests.get("setup.cfg"))
        spec_text = match.group(1) if match else (cfg.get("options", "python_requires", fallback=None) if cfg else None)
    try:
        spec = SpecifierSet(spec_text) if spec_text else None
    except InvalidSpecifier:
        spec = None
    return sorted(versions), spec


def python_images(manifests: Mapping[str, str], images: Mapping[str, str] = BASE_IMAGES) -> list[str]:
    """The base images to try (its `requires-python` filters them). Old code, whose newest declared Python is older
    than the default image's, gets the oldest Python it accepts first (its era's packages were made for it);
    newer code nearest first to the newest Python it declares; with nothing declared, the default order. A Python
    older than every declared one comes last (`.python-version` `3.10.4` is not run on 3.9 first)."""
    declared, spec = declared_pythons(manifests)
    versions = [v for v in images if spec is None or spec.contains(f"{v}.0", prereleases=True)] or list(images)
    if declared:
        target, oldest = max(declared), min(declared)
        default = _minor(next(iter(images)))

        def distance(version: str) -> tuple[int, int, int]:
            minor = _minor(version)
            below = int(minor < oldest[1])
            if target[1] < default:  # old code: oldest first
                return (below, minor, 0)
            return (below, abs(minor - target[1]), -minor)  # nearest, then the newer one

        versions.sort(key=distance)
    return [images[v] for v in versions]


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def _setup_py_extras(text: str) -> set[str]:
    """Keys of dict literals assigned to or passed as extras in setup.py (read, never run)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set(re.findall(r"['\"](tests?|testing|dev)['\"]\s*:", text))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            found |= {keyword.arg for keyword in node.keywords if keyword.arg}  # extras_require=dict(tests=[...])
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if keys & set(TEST_EXTRAS) or any(isinstance(v, ast.List) for v in node.values):
                found |= keys
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
            for target in node.targets:  # EXTRAS_REQUIRE["dev"] = ...
                if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                    found.add(str(target.slice.value))
    return found


def _ini(text: str | None) -> configparser.RawConfigParser | None:
    if not text:
        return None
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser
