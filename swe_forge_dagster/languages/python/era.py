"""Era-true Python environments: the repository's dependencies resolved as of its base commit, and old build backends.

An unpinned `pytest` installs today's pytest, which no longer calls nose-style `setup(self)` methods, and today's
Werkzeug has no `url_quote`: a repository at a commit of 2021 was tested with the releases of 2021. So the first
recipe of an old commit installs with uv (`uv pip install --exclude-newer <date>`): every package, build
requirements included, as PyPI had it on that date; what the repository pins (a fully pinned requirements file)
is installed as pinned, since a pin never postdates its commit. Four corrections make the date work:

- the date is never before the chosen interpreter's release (`INTERPRETER_RELEASES`): packages of 2014 do not run
  on Python 3.9 (pytest 2.6 crashes on start), those of the day 3.9.0 came out do;
- setuptools and wheel are resolved as of `BUILD_TOOLS_FLOOR` at the earliest (`--exclude-newer-package
  setuptools=<date>`): a setuptools of before 64 has no PEP 660 `build_editable` hook, so an editable install of
  an old project would fail for the date alone, and today's has no `pkg_resources` for the era's setuptools_scm;
- a package with no release before the date (deleted and re-uploaded later, as atomicwrites) is taken as of
  today, named in the record (`ERA_UV`);
- bytecode is compiled at install, as pip does (`--compile-bytecode`): an old package compiled at import under a
  suite's `filterwarnings = error` turns its invalid escapes into SyntaxErrors (flask 2.0 with blinker 1.4).

The date is in the recipe (`RESOLUTION_VAR`, exported by its first step), so an era environment's image is its
commit's (the image tag is the recipe's key: two commits of different dates never share one, nor does one layer
over the other's packages), and an exported task's install resolves as of the same date wherever it runs. The
recipe's last step writes what it resolved (`RUNTIME_FILE`:
interpreter, pytest, resolution date, rung), which the build turns into image labels that `validate` and the
harness print.

A build backend pinned before setuptools 64 (`requires = ["setuptools~=62.6"]`) has no `build_editable` hook
whatever the date: `legacy_build` names what to install instead (a current setuptools and wheel and the other
build requirements), and the install runs without build isolation.

Pack-private (`languages.python` is the pack).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import datetime

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from swe_forge_dagster.execution.era import RESOLUTION_VAR, RUNG, iso_utc
from swe_forge_dagster.execution.recipe import ENV_DIR, RUNTIME_FILE, EnvRecipe
from swe_forge_dagster.languages.python.pyproject import build_system

INTERPRETER_RELEASES = {
    "3.8": "2019-10-14",
    "3.9": "2020-10-05",
    "3.10": "2021-10-04",
    "3.11": "2022-10-24",
    "3.12": "2023-10-02",
    "3.13": "2024-10-07",
}
"""Release day of each CPython minor's x.0: the earliest resolution date on that interpreter."""
PEP_660_SETUPTOOLS = Version("64")
"""The first setuptools with PEP 660's `build_editable` hook."""
EXEMPT = ("setuptools", "wheel")
"""Resolved as of `BUILD_TOOLS_FLOOR` at the earliest: the build tools of an editable install (module docstring)."""
BUILD_TOOLS_FLOOR = "2022-08-20T00:00:00Z"
"""Days after setuptools 64.0 (2022-08-10, PEP 660's `build_editable`), and long before 81 (2026-02) dropped
`pkg_resources`, which the build plugins of the era (setuptools_scm 4-6) import: resolving setuptools as of today
instead breaks every old project built with setuptools_scm (pytest 4-6)."""
RECORD_SCRIPT = f"{ENV_DIR}/record"
TODAY_FILE = f"{ENV_DIR}/era-today"
WHEELS_FILE = f"{ENV_DIR}/era-wheels"
VERSIONS = (
    "python -c 'import platform, pytest; "
    'print(f"python-version={platform.python_version()}\\npytest-version={pytest.__version__}")\''
)
"""The interpreter's and pytest's versions, as `name=value` lines (in the environment's virtual environment)."""
RECORD = (
    f"{VERSIONS} > {RUNTIME_FILE}\n"
    f"printf 'resolution-date=%s\\nrung={RUNG}\\n' \"${RESOLUTION_VAR}\" >> {RUNTIME_FILE}\n"
    f"[ ! -s {TODAY_FILE} ] || printf 'resolution-today=%s\\n' \"$(sort -u {TODAY_FILE} | tr '\\n' ' ')\" "
    f">> {RUNTIME_FILE}\n"
    f"[ ! -s {WHEELS_FILE} ] || printf 'resolution-wheels=%s\\n' \"$(sort -u {WHEELS_FILE} | tr '\\n' ' ')\" "
    f">> {RUNTIME_FILE}\n"
)
ERA_UV_SCRIPT = f"{ENV_DIR}/era-uv"
WHEEL_FLOOR = (
    "wheels=''\n"
    "day=$(printf '%s' \"$" + RESOLUTION_VAR + '" | cut -c1-10)\n'
    "older=$(python -c 'import sys; print(f\"3.{sys.version_info[1] - 1}\")')\n"
    "for attempt in 1 2 3 4 5 6; do\n"
    f'  probe=$(uv pip install --dry-run --only-binary :all: --exclude-newer "${RESOLUTION_VAR}" $wheels "$@" 2>&1) '
    "&& break\n"
    "  name=$(printf '%s\\n' \"$probe\" "
    "| sed -n 's/.*Wheels are required for `\\([A-Za-z0-9._-]*\\)`.*/\\1/p' | head -1)\n"
    "  gone=$(printf '%s\\n' \"$probe\" "
    "| sed -n 's/.*`\\([A-Za-z0-9._-]*\\)` was filtered by `exclude-newer`.*/\\1/p' | head -1)\n"
    f'  if [ -z "$name" ] && [ -n "$gone" ]; then wheels="$wheels --exclude-newer-package $gone=false"; '
    f'echo "$gone" >> {TODAY_FILE}; continue; fi\n'
    '  [ -n "$name" ] || break\n'
    f'  echo "$name" | uv pip compile - -q --only-binary :all: --python-version "$older" '
    f'--exclude-newer "${RESOLUTION_VAR}" >/dev/null 2>&1 || break\n'
    "  found=''\n"
    "  for months in 1 2 3 6 12 24; do\n"
    '    when=$(date -u -d "$day +$months months" +%Y-%m-%dT00:00:00Z) || break\n'
    f'    probe=$(uv pip install --dry-run --only-binary :all: --exclude-newer "${RESOLUTION_VAR}" $wheels '
    '--exclude-newer-package "$name=$when" "$@" 2>&1)\n'
    '    printf \'%s\\n\' "$probe" | grep -q "Wheels are required for \\`$name\\`" || { found=$when; break; }\n'
    "  done\n"
    '  [ -n "$found" ] || break\n'
    f'  wheels="$wheels --exclude-newer-package $name=$found"; echo "$name=$found" >> {WHEELS_FILE}\n'
    "done\n"
)
"""Before the install: a compiled package that, as of the date, has wheels for the interpreter before this one but
none for this one (numpy 1.19.2 and scipy 1.5.2 on Python 3.9 as of its release day) is taken as of the first later
date, a month then 2, 3, 6, 12 and 24 months on, at which it has one (numpy 1.19.4, scipy 1.5.4): building the era's
numpy from source takes many minutes on 2 cores, and its scipy needs BLAS and a Fortran toolchain. Found with dry
runs that build nothing (`--only-binary :all:`, under which uv names the package "Wheels are required for"; the
project itself is still built), named in `WHEELS_FILE` (the record's `resolution-wheels`). A package with no wheel
for the interpreter before either (pure Python, sdist only) is never moved, and stops the search; one with no
release before the date is taken as of today here already (as the install below does), so the search goes on."""
ERA_UV = WHEEL_FLOOR + (
    "extra=''\n"
    "for attempt in 1 2 3 4 5 6 7 8; do\n"
    f'  if out=$(uv pip install --exclude-newer "${RESOLUTION_VAR}" $extra $wheels "$@" 2>&1); then '
    "printf '%s\\n' \"$out\"; exit 0; fi\n"
    "  names=$(printf '%s\\n' \"$out\" | sed -n 's/.*`\\([A-Za-z0-9._-]*\\)` was filtered by `exclude-newer`.*/\\1/p' "
    "| sort -u)\n"
    '  [ -n "$names" ] || break\n'
    f'  for name in $names; do extra="$extra --exclude-newer-package $name=false"; echo "$name" >> {TODAY_FILE}; done\n'
    "done\n"
    "printf '%s\\n' \"$out\"\n"
    "exit 1\n"
)
"""`uv pip install --exclude-newer` with the recipe's arguments; a package that has no release before the date (its
old releases deleted, as atomicwrites' were in 2022: uv says it "was filtered by `exclude-newer`") is taken as of
today and named in `TODAY_FILE` (the record's `resolution-today`), a retry each, eight at most."""
"""Run after the install (in its venv): what it resolved, into `RUNTIME_FILE`; written by the date step so the
install stays the recipe's last command (the one reasons name)."""
UV_VENV = "python3 -m venv /opt/venv && . /opt/venv/bin/activate && python -m pip install -q uv"
"""The venv every Python recipe uses, with uv (pip's `--uploaded-prior-to` has no per-package exemption)."""


def interpreter_floor(python: str) -> str:
    """The earliest resolution date for Python `python` (`3.9`): its x.0 release day, midnight UTC."""
    return f"{INTERPRETER_RELEASES.get(python, '2020-10-05')}T00:00:00Z"


def resolution_date(committed: datetime, python: str) -> str:
    """max(the base commit's date, the interpreter's release): what the era recipe's install resolves as of."""
    return max(iso_utc(committed), interpreter_floor(python))


def legacy_build(pyproject: str | None) -> list[str] | None:
    """What to install before a no-isolation editable install when pyproject.toml pins a setuptools without PEP 660
    (`pins_before_pep_660`): a current setuptools and wheel plus the other build requirements; else None."""
    parsed = []
    for text in build_system(pyproject).requires:
        try:
            parsed.append(Requirement(str(text)))
        except InvalidRequirement:
            return None
    pinned = next((r for r in parsed if r.name.lower() == "setuptools"), None)
    if pinned is None or not pins_before_pep_660(pinned):
        return None
    return [*EXEMPT, *(str(r) for r in parsed if r.name.lower() not in EXEMPT)]


def pins_before_pep_660(setuptools: Requirement) -> bool:
    """Whether a setuptools requirement allows no release from 64 on (the first with `build_editable`): one of its
    clauses caps it below 64 (`<64`, `<=63.2`, `==62.6.0`, `~=62.6`, `==61.*`); `>=40`, `==67.*` do not."""
    for clause in setuptools.specifier:
        text = clause.version.removesuffix(".*")
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if clause.operator == "<" and version <= PEP_660_SETUPTOOLS:
            return True
        if clause.operator in ("<=", "==", "~=", "===") and version < PEP_660_SETUPTOOLS:
            return True
    return False


def legacy_install(install: str, build: list[str], pip: str = "pip install") -> str:
    """`install` (a `pip install ...` line) run without build isolation after `build` is installed with `pip`."""
    prepare = f"{pip} -q --upgrade {' '.join(shlex.quote(b) for b in build)}"
    return f"{prepare} && {install.replace('pip install', 'pip install --no-build-isolation', 1)}"


def era_recipe(
    today: EnvRecipe,
    python: str,
    manifests: Mapping[str, str],
    committed: datetime,
    build_first: list[str] | None = None,
) -> EnvRecipe:
    """`today` (a venv, then one plain `pip install ...`) resolved as of the commit's date with uv, on Python
    `python` (see the module docstring). Every step is one line: an exported task joins them with `&&`. Build
    requirements the caller found (`build_first`: a compiled setup.py's) are installed first, as of the same date,
    and the project without build isolation."""
    date = resolution_date(committed, python)
    tools = max(date, BUILD_TOOLS_FLOOR)
    exempt = " ".join(f"--exclude-newer-package {name}={tools}" for name in EXEMPT)
    uv = f"sh {ERA_UV_SCRIPT} {exempt} --compile-bytecode"
    install = today.install_commands[-1].replace("pip install", uv)  # the project's, and each optional one's
    build = legacy_build(manifests.get("pyproject.toml")) or build_first
    if build is not None:
        prepare = f"{uv} -q --upgrade {' '.join(shlex.quote(b) for b in build)}"
        install = f"{prepare} && {install.replace(uv, f'{uv} --no-build-isolation', 1)}"
    step = (
        f"export {RESOLUTION_VAR}={date} && mkdir -p {ENV_DIR} && printf '%s' {shlex.quote(RECORD)} > {RECORD_SCRIPT} "
        f"&& printf '%s' {shlex.quote(ERA_UV)} > {ERA_UV_SCRIPT}"
    )
    first = today.install_commands[:-2]  # what comes before today's venv (the build tools of a compiled project)
    steps = (*first, UV_VENV, step, f"{install} && sh {RECORD_SCRIPT}")
    return EnvRecipe(steps, today.test_command, today.base_image)
