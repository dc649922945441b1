"""Test runners: the adapter every language pack fills to run a chosen set of test files and read per-test results.

The adapters themselves sit in their language packs (`languages`); the registry finds one
by name (`registry.runner_for`) or by the command it reads (`registry.runner_of`). A runner adapter
knows its default command template (`{tests}` becomes the quoted targets of the test files: the files
themselves, Go packages, CMake targets…; `{report}` the fresh path its structured report goes to),
how to read that report into test ids and outcomes (its pack's parser), which of a test patch's files
it runs, and the command that runs a single test (the seed's `checks.txt`). Validation and evaluation
both pick the adapter from the test command, so one parser serves both and a stored command always
says how it is read.

Test ids are the form SWE-bench Multilingual lists (pytest node ids, GoogleTest `suite.test`, Go
`TestName/sub`, mocha/jest full titles, Rust `module::test`, Java `Class#method`).
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from swe_forge_dagster.execution.junit import Outcome, worst

if TYPE_CHECKING:
    from swe_forge_dagster.execution.canaries import Plant

_COMMAND = r"(?:^|[\s;&|(])(?:\S*/)?{}(?=\s|$|;)"
"""A runner named as a command word (after a separator or a path: `npx mocha`, `./bin/mocha`), not inside another
word or an argument."""
VENDORED = ("vendor", "third_party", "3rdparty")
"""Directories of other projects' code, whatever the language: their test sources are not the repository's tests
(a runner adds its own language's, `Runner.vendored`)."""


def command_word(word: str) -> str:
    """A `detect` regex for a runner named as a command word (after a separator or a path, so also after a package
    runner's word: `npx --no-install mocha`)."""
    return _COMMAND.format(word)


@functools.lru_cache(maxsize=64)
def _vendored(folders: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(^|/)({})/".format("|".join(re.escape(folder) for folder in (*VENDORED, *folders))))


def fill_tests(template: str, files: Iterable[str], report: str | None = None) -> str:
    """The template with `{tests}` replaced by the quoted test files (and `{report}` by `report`; None: left as
    it is): the one way every caller fills it.

    Recipes are `str.format` templates (the environment agent's commands are checked that way, so
    any other brace in them is doubled: `find . -exec rm {{}} +`); a command that is not a valid
    format template (a seed or SWE-bench input with literal braces) has the fields replaced as text.
    """
    joined = " ".join(shlex.quote(f) for f in files)
    report = report or "{report}"
    try:
        return template.format(tests=joined, report=report)
    except (KeyError, IndexError, ValueError):
        return template.replace("{tests}", joined).replace("{report}", report)


def anchored(text: str) -> str:
    """A pattern (RE2, JavaScript or Python syntax) that matches exactly `text`."""
    return "^" + re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", text) + "$"


def title_at_end(text: str) -> str:
    """A pattern (JavaScript syntax) that matches a full test name ending with the title path `text` (jest and vitest
    match `-t` against the describe titles and the test's joined by spaces; some vitest versions start it with one)."""
    return "(?:^| )" + anchored(text)[1:]


def _same(test_id: str) -> str:
    return test_id


def _named(test_id: str) -> bool:
    return bool(test_id.strip())


@dataclass(frozen=True)
class SwebenchLog:
    """How SWE-bench 5 reads this runner's results from an eval script's console log: the `PARSER_REGISTRY` name of
    the parser, and the rewrite of our test command that makes it print what that parser reads (pytest's `-rA`
    summary, mocha's TAP), test for test the outcomes our own report holds."""

    parser: str
    command: Callable[[str], str] = _same
    test_id: Callable[[str], str] = _same
    """The name that parser gives the test our full id names (`parse_log_pytest` keeps a line's first word)."""


@dataclass(frozen=True)
class Runner:
    """One test framework: its report parser, its single-test command and how its report path is set."""

    name: str
    parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]]
    single_template: str
    """One test's command: `{id}` the quoted test id, `{tests}` the quoted targets of its files."""
    grading_id: Callable[[str], str] = _same
    """A full test id in the form SWE-bench's log parser for this runner produces (its lists use it)."""
    report_kind: str = "JUnit"
    language: str = ""
    """SWE-bench's name of the language (its `harness/log_parsers/<language>.py`)."""
    template: str = ""
    """The default command: `{tests}` the targets, `{report}` the report's path."""
    detect: str = r"(?!)"
    """A regex that recognises a command of this runner (`registry.runner_of`)."""
    suffixes: tuple[str, ...] = ()
    targets: Callable[[Sequence[str]], list[str]] = field(default=list)
    """What `{tests}` is given for the test files: the files (pytest, mocha), packages (go), targets (CMake)."""
    test_file: Callable[[str], bool] | None = None
    """Whether it runs the file at a path, when its suffixes alone do not say (pytest's `test_*.py`)."""
    own_ids: Callable[[Mapping[str, Outcome], Mapping[str, str]], dict[str, Outcome]] | None = None
    """The outcomes of the tests defined in the given files (path -> text), when a run reports others too (pytest
    ids start with their file; go runs whole packages); None: it runs only the files it is given."""
    in_process: bool = False
    """Its tests run in the process of the code under test, which collects every test of the files it is given:
    the checks give it the task's files whole, a test absent before the fix is not a failure, and the harness
    plants canaries and probes its configuration (`languages.python.canaries`, `languages.python.config`)."""
    well_formed: Callable[[str], bool] = _named
    """Whether a string is a test id in this runner's id grammar (a pytest node id names a file or a `::` node): a
    dataset's list can hold other text (`[100%]`, cut from a progress line), which no run can ever report."""
    plant: Plant | None = None
    """The canaries this runner's checks carry (`execution.canaries`): tests planted beside the task's own whose
    outcomes a forged report gets wrong; None: it has none yet."""
    twins_apart: bool = False
    """Its canaries' twins run apart (`Planted.apart`): the harness starts one more container for the run of the twins
    in place of their originals."""
    single_id: Callable[[str], str] = _same
    """The selector that makes `single_template` run exactly the test `test_id` (an anchored regex for runners
    that select by pattern)."""
    swebench_log: SwebenchLog | None = None
    """How a SWE-bench 5 eval script runs it so that a registered log parser reads our ids (`export.task_repo`);
    None: no task repository can carry its tasks yet."""
    vendored: tuple[str, ...] = ()
    """Directories of other projects' code in its language (installed packages, a vendored test framework), beside
    the generic `VENDORED`: a file under one is never a test it runs by `suffixes`."""
    stored_report: str = ""
    """The fixed report path its stored commands write (commands made before `{report}` existed, and the agents'
    replays of them): replaced by each run's fresh path; empty: its commands say `{report}`."""
    own_report: Callable[[str], str | None] | None = None
    """The report path a filled command with no `{report}` names by its runner's own option, or None: it names none
    (then `stored_report`, where nothing will be written, is read)."""
    unlisted: Callable[[str], set[str]] | None = None
    """The tests a run's console names as ending in a way a dataset lists nowhere though the report says passed
    (pytest's `XPASS` summary lines: a non-strict unexpected pass, which SWE-bench's parser leaves out): validation
    reads them as `xpassed`, in neither list. For lists only, never for a verdict (printed text can name any test)."""
    plugins_off: str = ""
    """A shell line run before its command that stops it loading plugins installed packages declare (package
    metadata reaching its path cannot inject one), unless the run allows plugin autoload; empty: it has none."""

    def command(self, template: str, files: Iterable[str], report: str) -> tuple[str, str]:
        """(the shell command for `files`, the report path to read).

        `{report}`, or the runner's `stored_report`, is replaced by `report` (fresh per run). A
        template that writes its report to a path of its own (`own_report`) keeps it, and that path
        is returned (the caller removes it before the run, so a stale file is never read); a
        template with no report option at all gets `stored_report` (else `report`), where nothing
        will be written.
        """
        targets = self.targets(list(files))
        if "{report}" in template:
            return fill_tests(template, targets, report), report
        command = fill_tests(template, targets)
        if self.stored_report and self.stored_report in command:
            return command.replace(self.stored_report, report), report
        own = self.own_report(command) if self.own_report is not None else None
        return command, own or self.stored_report or report

    def own(self, outcomes: Mapping[str, Outcome], files: Mapping[str, str]) -> dict[str, Outcome]:
        """The outcomes of the tests defined in `files` (see `own_ids`)."""
        return self.own_ids(outcomes, files) if self.own_ids is not None else dict(outcomes)

    def single_test(self, test_id: str, files: Sequence[str] = ()) -> str:
        """The command that runs `test_id` alone (defined in `files`), for `checks.txt` and people."""
        joined = " ".join(shlex.quote(t) for t in self.targets(list(files)))
        selector = shlex.quote(self.single_id(test_id))
        return self.single_template.replace("{id}", selector).replace("{tests}", joined)

    def runs(self, path: str) -> bool:
        """Whether this runner runs the test file `path` (a test patch also carries fixtures and data)."""
        if self.test_file is not None:
            return self.test_file(path)
        return PurePosixPath(path).name.endswith(self.suffixes) and not _vendored(self.vendored).search(path)


def swebench_ids(runner: Runner, full_ids: Iterable[str]) -> list[str]:
    """The ids as SWE-bench lists them (`runner.grading_id`), in order, each once."""
    return list(dict.fromkeys(runner.grading_id(test_id) for test_id in full_ids))


def graded_outcomes(runner: Runner, outcomes: Mapping[str, Outcome]) -> dict[str, Outcome]:
    """Outcomes keyed by SWE-bench's ids. Tests whose ids cut to the same one share it, and the worst
    outcome wins, as in SWE-bench, whose parser keeps the last line for an id and pytest's `-rA`
    summary prints passes first and failures last."""
    graded: dict[str, Outcome] = {}
    for test_id, outcome in outcomes.items():
        key = runner.grading_id(test_id)
        graded[key] = outcome if key not in graded else worst(graded[key], outcome)
    return graded
