"""pytest, the Python pack's runner: its command, how a command is recognised, its ids and test files.

Pack-private (`languages.python` is the pack); separate so the generic `execution.recipe` can default
to its command without importing the registry.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.runners import Runner, SwebenchLog
from swe_forge_dagster.languages.python.canaries import plant_pytest
from swe_forge_dagster.languages.python.junit_ids import pytest_outcomes

JUNIT = "/tmp/junit.xml"
"""The report path written in stored pytest commands (`Runner.stored_report`); each run substitutes its own fresh
path."""
_JUNITXML = re.compile(r"--junit-?xml[= ](?P<path>'[^']+'|\"[^\"]+\"|\S+)")
ENVIRONMENT_PLUGINS = (
    "import importlib.metadata as m, os, re, site, sys, sysconfig\n"
    "base = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))\n"
    "if os.path.isfile(os.path.join(base, 'pyvenv.cfg')):\n"
    "    scheme = 'venv' if 'venv' in sysconfig.get_scheme_names() else 'posix_prefix'\n"
    "    where = sysconfig.get_paths(scheme=scheme, vars={'base': base, 'platbase': base})\n"
    "    paths = list(dict.fromkeys(where[k] for k in ('purelib', 'platlib')))\n"
    "else:\n"
    "    paths = site.getsitepackages()\n"
    "found = {}\n"
    "for dist in m.distributions(path=paths):\n"
    "    for ep in dist.entry_points:\n"
    "        if ep.group == 'pytest11' and re.fullmatch(r'[\\w.-]+', ep.name) "
    "and re.fullmatch(r'[A-Za-z_][\\w.]*(:[A-Za-z_][\\w.]*)?', ep.value.replace(' ', '')):\n"
    "            found.setdefault(ep.name, ep.value.replace(' ', ''))\n"
    "if found:\n"
    "    with open(os.path.join(paths[0], 'swe_forge_environment_plugins.py'), 'w') as loader:\n"
    "        loader.write(sys.argv[1])\n"
    "print(' '.join(f'{name}={value}' for name, value in found.items()))\n"
)
"""The `[pytest11]` entry points (`name=module:attr`) of the packages installed in the environment's own
site-packages. Read with `python -I -S` and an explicit path: no `.pth` file is processed, no `sitecustomize`
imported, /repo is never searched (without `site`, a virtual environment's site-packages is found from its
`pyvenv.cfg`, by the `venv` scheme where there is one: Python 3.9 sets `sys.prefix` for it only in `site`, and
Debian's default scheme is `posix_local`, whose paths are `/usr/local`'s). So package metadata an agent writes into
the checkout names no plugin. When there are some, it writes its argument (`PLUGIN_LOADER`) into that site-packages
as `swe_forge_environment_plugins` (a fresh container per run: the environment image is not changed; a module of
that name added to the checkout is a new top-level module, which the harness resets)."""
PLUGIN_LOADER = (
    "import importlib, os\n\n\n"
    "def pytest_addhooks(pluginmanager):\n"
    "    for item in os.environ.get('SWE_FORGE_ENV_PLUGINS', '').split():\n"
    "        name, _, value = item.partition('=')\n"
    "        module, _, attr = value.partition(':')\n"
    "        if pluginmanager.is_blocked(name) or pluginmanager.get_plugin(name) is not None:\n"
    "            continue\n"
    "        plugin = importlib.import_module(module)\n"
    "        for part in filter(None, attr.split('.')):\n"
    "            plugin = getattr(plugin, part)\n"
    "        if not pluginmanager.is_registered(plugin):\n"
    "            pluginmanager.register(plugin, name)\n"
)
"""A plugin module (`PYTEST_PLUGINS`) that registers those entry points as autoloading registers them: under the
entry point's name (so `-p no:randomly` in a configuration still blocks pytest-randomly, `-p xdist` and a conftest's
`pytest_plugins = ["xdist"]` find it loaded), skipping blocked and already loaded ones. Loaded after the command
line's and the configuration's `-p` options, as autoloading is, from `pytest_addhooks` (called at its registration,
with the plugin manager)."""
NO_AUTOLOAD = (
    "export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\n"
    f"__sf_plugins=$(cd / && python -I -S -c {shlex.quote(ENVIRONMENT_PLUGINS)} {shlex.quote(PLUGIN_LOADER)} "
    '2>/dev/null) && [ -n "$__sf_plugins" ] && export SWE_FORGE_ENV_PLUGINS="$__sf_plugins" '
    'PYTEST_PLUGINS="swe_forge_environment_plugins${PYTEST_PLUGINS:+,$PYTEST_PLUGINS}"\n'
)
"""Installed packages' `[pytest11]` entry points are not autoloaded (`Runner.plugins_off`); the environment's own
(`ENVIRONMENT_PLUGINS`) are loaded by `PLUGIN_LOADER` instead, so a suite whose configuration needs one (astropy's
setup.cfg passes pytest-doctestplus' `--doctest-rst`) starts as it did when its lists were made. Where there is no
Python, or no plugin, nothing more is set."""
PYTEST = (
    "python -m pytest -p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 "
    f"--junitxml={JUNIT} -rA -q {{tests}}"
)
"""The default pytest command: JUnit for our ids, `-rA` so the console log is the one SWE-bench's
log parser reads (a `PASSED <id>` / `FAILED <id> - ...` line per test)."""
_SUMMARY = re.compile(r"(?:^|\s)-r\S*A")


def _with_summary(command: str) -> str:
    """Our pytest command with `-rA`, whose summary lines (`PASSED <id>`) are what `parse_log_pytest` reads: given
    right after the pytest command word, so a command that goes on (`; exit $rc`, `| tee log`) keeps its shape."""
    if _SUMMARY.search(command):
        return command
    word = re.search(PYTEST_COMMAND, command)
    return f"{command[: word.end()]} -rA{command[word.end() :]}" if word else f"{command} -rA"


def _first_word(test_id: str) -> str:
    """A pytest id as `parse_log_pytest` names it from a `-rA` line: up to its first whitespace."""
    return test_id.split()[0] if test_id.split() else test_id


PYTEST_COMMAND = r"(?:^|[\s;&|(])(?:\S*/)?(?:python[\d.]* -m pytest|pytest|py\.test)(?=\s|$)"
"""pytest named as a command, whatever its arguments say (`-p no:doctest`, `-k "not jest"`, `tests/mocha/`)."""
_PLAIN = re.compile(r"\|\||;|&&|\|")


_OPTION = re.compile(r"(.*?)\[(.*)\]")
CHECKOUTS = ("/repo/", "/testbed/")
"""Where a repository is checked out in a sandbox: ours (`repo_box.REPO_DIR`) and SWE-bench's."""


def _pytest_id(test_id: str) -> str:
    """SWE-bench's form: `parse_log_pytest` keeps the first whitespace-delimited token after the status word, and
    `parse_log_pytest_options` (pylint's, requests', pydicom's) cuts a parameter that is an absolute path to its
    last part (`test_stdin[/repo/tests/mymodule.py-mymodule-/repo/tests/mymodule.py]` -> `test_stdin[/mymodule.py]`).
    The cut applies only to a parameter that names the machine's own checkout (SWE-bench's /testbed, our /repo):
    its full form matches no dataset anyway, and the cut one matches the datasets that list it; a constant path
    (pytest-11143's `test_get_cache_dir[/tmp/pycs-/home/projects/src/foo.py-...]`) is listed whole, as
    `parse_log_pytest` gives it."""
    token = (test_id.split() or [test_id])[0]
    option = _OPTION.search(token)
    if option is None:
        return token
    main, param = option.groups()
    machine = any(root in param for root in CHECKOUTS)
    if machine and param.startswith("/") and not param.startswith("//") and "*" not in param:
        return f"{main}[/{param.split('/')[-1]}]"
    return token


def _pytest_node_id(test_id: str) -> bool:
    """A pytest node id: a file or directory path (`testing/test_x.py`), then `::` nodes (class, function, params).
    Text cut from a console line (`[`, `[100%]`) names neither."""
    path, node, rest = test_id.partition("::")
    if not path or path.startswith("[") or any(c.isspace() for c in path):
        return False
    return bool(rest.strip()) if node else path.endswith(".py") or "/" in path


def _pytest_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return (name.endswith(".py") and name.startswith("test")) or name.endswith("_test.py")


def _junitxml_path(command: str) -> str | None:
    """The path a pytest command writes its JUnit report to by its own `--junitxml=PATH`, or None."""
    own = _JUNITXML.search(command)
    return own.group("path").strip("'\"") if own else None


def _own_ids(outcomes: Mapping[str, Outcome], files: Mapping[str, str]) -> dict[str, Outcome]:
    """A pytest id starts with its file."""
    return {test_id: o for test_id, o in outcomes.items() if test_id.split("::")[0] in files}


INTERNAL_ERROR = "pytest.py::internal"
"""The testcase pytest's JUnit report adds when the session hit an INTERNALERROR."""


def parse_pytest_junit(xml: bytes, files: Iterable[str] | None = None) -> dict[str, Outcome]:
    """pytest's JUnit report; a session that hit an INTERNALERROR passes nothing (as SWE-bench's log parser reads
    it: pytest then prints no `-rA` summary), though the report lists the tests run before the crash as passed."""
    outcomes = pytest_outcomes(xml, known_files=files)
    if outcomes.pop(INTERNAL_ERROR, None) is not None:
        outcomes = {test_id: "error" if o == "passed" else o for test_id, o in outcomes.items()}
    return outcomes


_XPASS = re.compile(r"^XPASS (\S+)", re.MULTILINE)


def xpassed(console: str) -> set[str]:
    """The node ids of pytest's `-rA` summary lines `XPASS <id> - reason` (`Runner.unlisted`)."""
    return set(_XPASS.findall(console))


def plain_pytest(command: str) -> bool:
    """Whether pytest's exit status is the command's (no `||`, `;` or pipe that could hide it)."""
    words = command.split()
    return (
        bool(words)
        and not _PLAIN.search(command)
        and (
            words[0] == "pytest" or words[:3] == ["python", "-m", "pytest"] or words[:3] == ["python3", "-m", "pytest"]
        )
    )


PYTEST_RUNNER = Runner(
    name="pytest",
    parse=parse_pytest_junit,
    single_template="python -m pytest -p no:cacheprovider -q {id}",
    grading_id=_pytest_id,
    language="python",
    template=PYTEST,
    detect=PYTEST_COMMAND,
    suffixes=(".py",),
    test_file=_pytest_file,
    own_ids=_own_ids,
    in_process=True,
    well_formed=_pytest_node_id,
    swebench_log=SwebenchLog("parse_log_pytest", _with_summary, _first_word),
    plant=plant_pytest,
    twins_apart=True,
    stored_report=JUNIT,
    own_report=_junitxml_path,
    plugins_off=NO_AUTOLOAD,
    unlisted=xpassed,
)
