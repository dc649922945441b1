"""What the sandbox agents are told about Python, and the form of the environment agent's pytest command.

Python's environment agent installs into a virtual environment on the base images and submits a plain pytest
command (the harness adds the JUnit options it reads); its test agent writes `test_*.py` modules in a tests
directory. Pack-private (`languages.python` is the pack); `tasks.agent_prompts` asks the registry for it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from swe_forge_dagster.languages.pack import AgentHints, RunnerHints
from swe_forge_dagster.languages.python.runner import JUNIT

JUNIT_OPTIONS = f"-p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 --junitxml={JUNIT} -rA"
"""What the harness needs from every pytest run (as in `PYTEST`); added to the agent's commands."""

TEST_PROMPT = """\
You write tests for a merged pull request that came without tests, so that it can become a benchmark task.

The container is the repository's installed test environment (no network). /repo holds the repository \
with the pull request's change already applied (committed, so `git status` shows your new files); your \
shell starts there. Tests run with: {test_command}

Write new pytest test files that check the behaviour the pull request changes, through the public \
interface it describes: they must pass with the change, and at least one of them must fail without it. \
Make them deterministic, fast and offline, and do not test implementation details. Use shell to read \
the code, write the files and run them. Then call submit_tests with the whole content of every new file \
(paths relative to the repository root, in a tests directory; existing files cannot be changed), the \
node ids you expect to fail without the change (fail_to_pass) and those that pass either way \
(pass_to_pass).

Submissions are checked in a fresh container: the files must be new test files with at least one \
test_*.py module, every test in them must pass with the change, and at least one must fail when the \
change is reverted. The task's lists come from running them, not from your lists."""


def agent_command(command: str) -> str:
    """The agent's test command as an `EnvRecipe.test_command`: `{tests}` placed, JUnit options added.

    Accepted forms: a command with `{tests}` where the test paths go, or one that ends with a pytest
    invocation (`{tests}` is appended). The JUnit options go in front of `{tests}`, where pytest
    reads them, unless the command already writes the report to `runner.JUNIT`.
    Raises ValueError with what to change.
    """
    command = command.strip()
    try:
        command.format(tests="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"the test command has braces other than {{tests}} ({exc!r}): double them") from exc
    if "{tests}" not in command:
        if not re.search(r"\bpytest\b", command):
            raise ValueError("the test command must contain {tests} or end with a pytest invocation")
        command += " {tests}"
    if "--junitxml" in command:
        if JUNIT not in command:
            raise ValueError(f"the test command writes JUnit elsewhere: leave --junitxml out (it goes to {JUNIT})")
        return command
    return command.replace("{tests}", f"{JUNIT_OPTIONS} {{tests}}", 1)


def proof_module(path: str) -> bool:
    """A pytest module by its default names (`test_*.py`, `*_test.py`): the files an environment is proven with."""
    return bool(re.fullmatch(r"test_.*\.py|.*_test\.py", PurePosixPath(path).name))


def _written_module(path: str) -> bool:
    """A written file pytest is given: a `test*.py` module, as the test agent has always been checked."""
    return path.endswith(".py") and PurePosixPath(path).name.startswith("test")


HINTS = AgentHints(
    title="Python",
    image="Debian bookworm with python3, python3-venv, pip and pytest",
    install="Debian's system Python is externally managed, so install into a virtualenv, e.g. "
    "`python3 -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate && pip install -e .`.",
    network="PyPI may be reachable",
    runners={
        "pytest": RunnerHints(
            targets="the test files",
            naming="tests/test_<name>.py",
            example="tests/test_example.py",
            id_form="pytest node ids, path::test",
            place="put it in a tests directory",
            no_test_file="no test module: name at least one file test_*.py (those are the files that run)",
            ids_name="pytest node ids",
            written_test=_written_module,
            writer_prompt=TEST_PROMPT,
            replays_recipe=True,
        ),
        "django": RunnerHints(
            targets="runtests.py labels: dotted module paths under tests/ (tests/utils_tests/test_html.py -> "
            "utils_tests.test_html)",
            naming="tests/<app>/test_<name>.py (a django.test TestCase module)",
            example="tests/utils_tests/test_example.py",
            id_form="test_x (app.module.Class), or the first line of the test's docstring",
        ),
        "sympy": RunnerHints(
            targets="the test files' paths",
            naming="<package>/tests/test_<name>.py",
            example="sympy/core/tests/test_example.py",
            id_form="the bare function name: test_x",
        ),
    },
    kind="packaging files",
    carry_over="cd, export and an activated venv",
    install_goal="install it with its test dependencies",
    kept="the commands that install everything, starting from a fresh container of the same image with the same "
    "files in /repo. Keep what they create outside /repo (a venv in /opt/venv): before the tests run, /repo is "
    "replaced by a fresh copy of the repository files and only *.egg-info directories of the install are kept.",
    test_command="the pytest command, run in /repo with the venv state of the install. Put {tests} where the test "
    "file paths go, or end the command with the pytest invocation so the paths can be appended. Leave out "
    "--junitxml (the harness adds it) and double any other curly braces.",
    command_form="the pytest command, with {tests} where the test file paths go, or ending with the pytest "
    "invocation so they can be appended",
    command_options=JUNIT_OPTIONS,
    proof="at least one test must pass",
    submit_forms=False,
)
