"""The `eval.sh` and the `Dockerfile` of a SWE-bench 5 task directory, made from one of our task records.

Why these two: SWE-bench 5 builds an instance's image from the Dockerfile in its task directory (the
directory is the build context) and grades by running `eval.sh` in it after the prediction's patch: the
test patch applied, the tests run between `>>>>> Start Test Output` and `>>>>> End Test Output`, and the
log between the markers read by the parser the task names. So the Dockerfile rebuilds our environment
(the recipe we proved, on the base image we proved it on) and the eval script runs our test command in
the form its registered parser reads (`Runner.swebench_log`).

The image keeps the tree where our sandboxes keep it (`/repo`) and gives SWE-bench its `/testbed` as a
link to it, so the paths an install records and the ids a run prints are the ones our harness sees.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from swe_forge_dagster.environments.environment import install_git_script
from swe_forge_dagster.environments.sandboxes import ca_variables
from swe_forge_dagster.execution.era import RESOLUTION_VAR
from swe_forge_dagster.execution.patch import FileSection, split_sections
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.sandbox_config import CONTAINER_CA_PATH, DEFAULT_ENV
from swe_forge_dagster.export.instance_files import TREE_FILE
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.languages.registry import runner_for

START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
"""SWE-bench's markers around the test output (`swebench.harness.constants`)."""
CHECKOUT, TESTBED = "/repo", "/testbed"
BUILD_DIR = "/swe-forge-build"
INSTALL_FILE, CA_FILE = "install.sh", "ca-certificates.crt"
SHELL_STATE = "/etc/swe-forge-env.sh"
"""The install's exported environment, which the eval script sources before it runs the tests."""
REPORT = "/tmp/swe-forge-report"
"""Where our command's own structured report goes in the eval run (SWE-bench reads the console log)."""


@dataclass(frozen=True)
class RepoTask:
    """One task as a task repository holds it: the instance, the environment we proved it in (base image and
    install commands), the test command, its runner and the files our harness hands it."""

    instance: SWEBenchInstance
    image: str
    install_commands: tuple[str, ...]
    test_command: str
    runner: str
    run_files: tuple[str, ...]

    @property
    def task_id(self) -> str:
        return self.instance.instance_id


class NotExportable(ValueError):
    """A task SWE-bench cannot run as we do (its runner has no registered log form yet); the message says why."""


def log_form(record: RepoTask) -> tuple[Runner, str]:
    """(the task's runner, the `PARSER_REGISTRY` name that reads its eval log)."""
    try:
        runner = runner_for(record.runner)
    except ValueError as exc:
        raise NotExportable(str(exc)) from None
    if runner.swebench_log is None:
        raise NotExportable(f"no SWE-bench log parser reads the {record.runner or 'unknown'} runner's output yet")
    return runner, runner.swebench_log.parser


def graded_lists(record: RepoTask) -> dict[str, list[str]]:
    """tests.json: the lists as the task's log parser names the tests. From our full ids when the task has them (a
    pytest parameter naming the checkout keeps its path, as `parse_log_pytest` prints it; an id that stands for tests
    of both lists is FAIL_TO_PASS only, as in our dataset), else the instance's lists as they are."""
    inst = record.instance
    runner, _ = log_form(record)
    if not inst.fail_to_pass_full or runner.swebench_log is None:
        return {"FAIL_TO_PASS": inst.FAIL_TO_PASS, "PASS_TO_PASS": inst.PASS_TO_PASS}
    name = runner.swebench_log.test_id
    fail_to_pass = list(dict.fromkeys(name(test_id) for test_id in inst.fail_to_pass_full))
    passing = dict.fromkeys(name(test_id) for test_id in inst.pass_to_pass_full)
    pass_to_pass = [test_id for test_id in passing if test_id not in fail_to_pass]
    return {"FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass}


def test_command(record: RepoTask) -> str:
    """The command the eval script runs: ours for the task's test files, printing what the parser reads."""
    runner, _ = log_form(record)
    assert runner.swebench_log is not None
    files = [f for f in record.run_files if runner.in_process or runner.runs(f)]  # as the harness's checks do
    command, _report = runner.command(record.test_command, files, REPORT)
    return runner.swebench_log.command(command)


def _heredoc(text: str, stem: str = "EOF_SWE_FORGE") -> tuple[str, str]:
    """(a delimiter that is no line of `text`, the text ending with a newline)."""
    lines = set(text.splitlines())
    delimiter, n = stem, 0
    while delimiter in lines:
        n += 1
        delimiter = f"{stem}_{n}"
    return delimiter, text if text.endswith("\n") else text + "\n"


def base_paths(sections: list[FileSection]) -> tuple[list[str], list[str]]:
    """(the test patch's paths that exist at the base commit, the ones it creates): a modified or deleted file
    exists, a new one (`new file mode`, `--- /dev/null`) and a rename's or copy's target do not, its source does."""
    existing: list[str] = []
    created: list[str] = []
    for section in sections:
        header = "\n" + section.text.split("\n@@", 1)[0].split("\nGIT binary patch", 1)[0]
        if section.old_path:
            existing.append(section.old_path)
            created.append(section.path)
        elif "\nnew file mode" in header or "\n--- /dev/null" in header:
            created.append(section.path)
        else:
            existing.append(section.path)
    return list(dict.fromkeys(existing)), [path for path in dict.fromkeys(created) if path not in existing]


def eval_script(record: RepoTask) -> str:
    """SWE-bench's eval script shape (`set -uxo pipefail`, test files reset, test patch applied, markers), running
    our command in a subshell (a command that ends with `exit $rc` must not end the script before the end marker).
    The test files are reset from the image's one commit (the base tree), before and after. Binary files travel in
    the patch itself (our diffs are `git diff --binary`), so the task needs no `test_assets/`."""
    sections = split_sections(record.instance.test_patch or "")
    hollow = [s.path for s in sections if s.is_binary and "GIT binary patch" not in s.text]
    if hollow:  # `Binary files a and b differ`: git cannot apply it, and we hold no content to stage instead
        raise NotExportable(f"the test patch names binary files without their content: {', '.join(hollow)}")
    existing, created = base_paths(sections)
    reset = f"git --literal-pathspecs checkout HEAD -- {' '.join(map(shlex.quote, existing))}" if existing else ":"
    remove = f"rm -f -- {' '.join(shlex.quote(p) for p in created)}" if created else ":"
    delimiter, patch = _heredoc(record.instance.test_patch or "")
    return (
        "#!/bin/bash\n"
        "set -uxo pipefail\n"
        f"cd {TESTBED}\n"
        f"source {SHELL_STATE}\n"
        f"{reset}\n"
        f"{remove}\n"
        f"git apply --verbose - <<'{delimiter}'\n"
        f"{patch}"
        f"{delimiter}\n"
        f": '{START}'\n"
        f"(\nset +u +o pipefail\n{test_command(record)}\n)\n"
        f": '{END}'\n"
        f"{reset}\n"
    )


RESTORE_TREE = (
    "git checkout -q -- . && git ls-files --others --exclude-standard --directory -z "
    "| xargs -0 -r printf '/%s\\n' >> .git/info/exclude || exit 1"
)
"""After the install, as our runs see the tree (`repo_box`): every file of the base commit as committed (an install
that rewrote a tracked file does not leak into the checks), and what the install added excluded from git, so
SWE-bench's `git clean` between patch attempts keeps it and `git status` shows only the patch's changes."""


def install_script(record: RepoTask, pretend: str, tags: Sequence[str]) -> str:
    """What the Dockerfile runs: the tree unpacked at /repo (/testbed a link to it), the release git history the
    install may read (`install_git_script`), kept for SWE-bench's `git apply` and resets; our recipe's commands in
    one shell as our builds run them, each of which must succeed; the base tree restored (`RESTORE_TREE`); then the
    shell's exported environment saved
    (`SHELL_STATE`), as our sandboxes keep it in the image (an activated venv, a PATH the install extended)."""
    steps = "".join(f"{{ {command}\n}} || exit $?\n" for command in record.install_commands)
    return (
        "#!/bin/bash\n"
        f"rm -rf {CHECKOUT} {TESTBED} && mkdir -p {CHECKOUT} && ln -s {CHECKOUT} {TESTBED} || exit 1\n"
        f"tar -xf {BUILD_DIR}/{TREE_FILE} -C {CHECKOUT} --strip-components=1 || exit 1\n"
        f"cd {CHECKOUT} || exit 1\n"
        f"export {pretend}\n"
        f"{install_git_script(tags)}\n"
        '[ -d .git ] || { echo "no git history: SWE-bench applies patches with git" >&2; exit 1; }\n'
        f"{steps}"
        f"cd {CHECKOUT} && {RESTORE_TREE}\n"
        f"unset {pretend.split('=', 1)[0]} {RESOLUTION_VAR}\n"
        f"export -p | grep -v -E '^declare -x (OLDPWD|PWD|SHLVL|HOSTNAME|_)=' > {SHELL_STATE}\n"
    )


def dockerfile(record: RepoTask, with_ca: bool) -> str:
    """FROM the base image we proved the recipe on; the environment our sandboxes give every command (and the CA
    bundle they mount, when the export was given one); the install; SWE-bench's working directory."""
    env = dict(DEFAULT_ENV)
    copy_ca = ""
    if with_ca:
        env.update(dict.fromkeys(ca_variables(), CONTAINER_CA_PATH))
        copy_ca = f"COPY {CA_FILE} {CONTAINER_CA_PATH}\n"
    env_lines = " \\\n    ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    return (
        f"FROM {record.image}\n"
        f"{copy_ca}"
        f"ENV {env_lines}\n"
        f"COPY {TREE_FILE} {INSTALL_FILE} {BUILD_DIR}/\n"
        f"RUN bash {BUILD_DIR}/{INSTALL_FILE} && rm -rf {BUILD_DIR}\n"
        f"WORKDIR {TESTBED}\n"
    )
