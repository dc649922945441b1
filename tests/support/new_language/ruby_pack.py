"""A Ruby pack (minitest on Debian's ruby), the whole of what the pipeline needs to know about Ruby.

Written as a third party would write one: it imports only the pack interface (`languages.pack`) and the
kernel's building blocks (`execution.*`), and it is registered by an installed distribution's entry point in
the `swe_forge.languages` group, with no edit to the product. The test copies this file into a temporary folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.reports import record
from swe_forge_dagster.execution.runners import Runner, command_word
from swe_forge_dagster.languages.pack import AgentHints, Files, LanguagePack, RunnerHints

MINITEST = (
    "ruby -Ilib -Itest -e 'files = ARGV.dup; ARGV.replace(%w[-v]); files.each { |f| require File.expand_path(f) }' "
    "{tests} > {report} 2>&1"
)
"""Every given test file in one process, minitest's verbose report (one line per test) written to `{report}`."""
_LINE = re.compile(r"^(?P<id>[A-Z][\w:]*#\S+) = [\d.]+ s = (?P<mark>[.FES])$", re.MULTILINE)
_OUTCOMES: dict[str, Outcome] = {".": "passed", "F": "failed", "E": "error", "S": "skipped"}


def parse_minitest(report: bytes, files: Iterable[str] = ()) -> dict[str, Outcome]:
    """`TestCalc#test_add = 0.00 s = .`: ids `Class#method`, as minitest's own `-n` filter names a test."""
    results: dict[str, Outcome] = {}
    for line in _LINE.finditer(report.decode(errors="replace")):
        record(results, line["id"], _OUTCOMES[line["mark"]])
    return results


MINITEST_RUNNER = Runner(
    name="minitest",
    parse=parse_minitest,
    language="ruby",
    template=MINITEST,
    report_kind="minitest verbose log",
    single_template="ruby -Ilib -Itest {tests} -v -n {id}",
    detect=command_word("ruby"),
    suffixes=(".rb",),
    test_file=lambda path: path.startswith("test/") and path.endswith(".rb"),
)


def ruby_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """A repository without gems needs no install: the interpreter and minitest are the image's."""
    if "Gemfile.lock" in tree:
        return [], "gems come from rubygems.org, which the sandbox cannot reach here"
    return [EnvRecipe(("ruby --version",), MINITEST, image)], None


PACK = LanguagePack(
    name="ruby",
    manifests=("Gemfile", "Rakefile"),
    extensions=(".rb",),
    runners=(MINITEST_RUNNER,),
    hints=AgentHints(
        title="Ruby",
        image="ruby with minitest, git",
        install="Nothing to install when the repository has no gems.",
        runners={
            "minitest": RunnerHints(
                targets="the test files",
                naming="test/test_<name>.rb (a Minitest::Test class)",
                example="test/test_example.rb",
                id_form="Class#method",
            )
        },
    ),
    images={"swe-forge-ruby:bookworm": "3.1"},
    recipes=ruby_recipes,
    test_code=lambda path: path.startswith("test/"),
    debian_packages="ruby ruby-minitest",
)
