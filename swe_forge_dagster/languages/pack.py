"""The interface every language pack fills: what one language means to the pipeline, in one value.

A pack is data plus a few functions (SWE-smith's `profiles/<language>.py`, SWE-bench's per-language
log parsers): the registry (`languages.registry`) lists the packs and every other module asks it,
so adding a language or changing how one is built, run, protected or prompted is one module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.toolchains import ImageBuild, version_numbers

if TYPE_CHECKING:
    from swe_forge_dagster.execution.canaries import Planted
    from swe_forge_dagster.execution.sandbox import Sandbox

Files = Mapping[str, str]
"""Root files read at the commit (name -> text), as `LanguagePack.read_files` names them."""


def _no_version(files: Files) -> tuple[int, ...] | None:
    return None


def _no_problem(files: Files, tree: set[str]) -> str | None:
    return None


def _names_nothing(_answer: object) -> frozenset[str]:
    return frozenset()


def _no_tree_files(_tree: set[str]) -> list[str]:
    return []


def _not_plain(_command: str) -> bool:
    return False


Changes = Sequence[tuple[str, str]]
"""What a diff really changed: (git status letter, repo-relative path)."""


@dataclass(frozen=True)
class ConfigProbe:
    """How to read a runner's effective configuration in a box, as its own loader computes it (`harness.protection`
    compares the sanity container's answer with the answer after an agent's diff): no list of file names can see
    every place a runner takes options from, its loader can."""

    read: Callable[[tuple[str, ...]], Callable[[Sandbox], object]]
    """The task's test files -> how to read the configuration in a box."""
    files: frozenset[str]
    """The file names reset when the answer changed."""
    triggers: frozenset[str] | None = None
    """The changed file names that make it worth asking again; None: ask after every diff."""
    names_files: Callable[[object], frozenset[str]] = _names_nothing
    """The files of /repo an answer names as the runner's (`execution.config_files`): configuration too."""


@dataclass(frozen=True)
class ConfigSections:
    """Shared files (`pyproject.toml`, `setup.cfg`) of which only one section configures a runner: a change to them
    is dropped only when it changes that section (a fix may bump a version in the same file)."""

    files: frozenset[str]
    section: Callable[[str, bytes | None], object]
    """(file name, its bytes or None) -> its runner's section, comparable with `==`."""


@dataclass(frozen=True)
class CanaryChecks:
    """Commands mode's canaries as shell checks (an exit code is all that mode has): the files to write, a command
    that must exit 0 and one that must not, and how the failing one is named in a verdict."""

    files: Mapping[str, bytes]
    passing: str
    failing: str
    failing_name: str


@dataclass(frozen=True)
class CommandCanaries:
    """A language's canaries for commands mode (a seed's shell checks), which no runner adapter reads."""

    plant: Callable[[Sequence[str], Callable[[str], bytes]], Planted | None]
    """(the FAIL_TO_PASS commands, a reader of the tree's files) -> canaries beside the test file they select."""
    checks: Callable[[Sequence[str], Planted], CanaryChecks | None]
    """(the FAIL_TO_PASS commands, canaries) -> their checks; None: not this language's, or no command selects them."""
    ids: Callable[[str], list[str]] = lambda command: []
    """The test ids one command selects (`tests/test_x.py::test_y`), by which its twins run apart are judged: a
    command that passed in the verification must fail in the run apart when a test it selects has a twin."""


@dataclass(frozen=True)
class RunnerHints:
    """What the agents are told about one runner: its `{tests}` targets, test file naming, an example file and the
    form of its test ids; and how the test agent's files for it are checked."""

    targets: str
    naming: str
    example: str
    id_form: str
    place: str = ""
    """What to do with a written file that is not a test file path; empty: name it as `naming` says."""
    no_test_file: str = ""
    """Why a submission none of whose files runs is refused; empty: said from the runner's name and `naming`."""
    ids_name: str = ""
    """What its ids are called in the test agent's answer form; empty: `<runner> test ids`."""
    written_test: Callable[[str], bool] | None = None
    """Whether a written file is one it is given; None: a test path (`registry.is_test_path`) it runs."""
    writer_prompt: str = ""
    """Its own test agent prompt (`{test_command}`: the command for an example file); empty: the generic one."""
    replays_recipe: bool = False
    """The agents replay the recipe's own command and read its report at the stored path (`Runner.stored_report`), as
    the environment agent's command names it; else through `execution.suite`, as validation reads it."""


@dataclass(frozen=True)
class AgentHints:
    """What the environment agent is told about the language's image and install."""

    title: str
    """The language as people name it (`JavaScript/TypeScript`)."""
    image: str = ""
    """What the toolchain image holds."""
    install: str = ""
    """How to install a repository of this language so its tests run offline."""
    network: str = "the package registry may be reachable"
    """What the network is good for during the install."""
    runners: Mapping[str, RunnerHints] = field(default_factory=dict)
    kind: str = ""
    """The environment prompt's name for the repository's own files it should explore first (`manifests`)."""
    carry_over: str = "cd and export"
    """What carries over between the agent's commands in its persistent shell."""
    install_goal: str = "install its dependencies, build what its tests need"
    """What the environment agent does before it runs some tests."""
    kept: str = ""
    """What of the install is kept (where outputs go); empty: the generic sentence."""
    test_command: str = ""
    """The environment prompt's `test_command` line; empty: one of its runners' templates (`{runners}` lists them)."""
    proof: str = "its report must show at least one passing test"
    """What the environment's replay must show."""
    submit_forms: bool = True
    """The environment agent submits a runner's template (with `{tests}` and `{report}`); False: the pack's own
    command form (`LanguagePack.agent_command`, described by `command_form`)."""
    command_form: str = ""
    """The answer form's description of that own command form."""
    command_options: str = ""
    """The options the harness adds to that own command form (the JUnit report it reads)."""


@dataclass(frozen=True)
class LanguagePack:
    """One language: recognition, images, versions, recipes, runners, protected files, prompt hints, image packages.

    Functions take the root files the pack reads (`read_files`, name -> text, only those present) and
    the commit's file list `tree`.
    """

    name: str
    """The toolchain name stored in tasks and used on the command line (`node`, `go`…)."""
    manifests: tuple[str, ...]
    """Root files whose presence says a repository is of this language."""
    extensions: tuple[str, ...]
    """Suffixes of source files of this language (a change's language decides between several manifests)."""
    runners: tuple[Runner, ...]
    """Its runner adapters, the first the default."""
    hints: AgentHints
    images: Mapping[str, str] = field(default_factory=dict)
    """Local toolchain images, tag -> the toolchain's version in it (`scripts/build-toolchain-image.sh`)."""
    read_files: tuple[str, ...] = ()
    """Root files read at the commit to decide the image and the install (the manifests are read too)."""
    tree_files: Callable[[set[str]], list[str]] = _no_tree_files
    """Files beyond the root ones that its recipes read, chosen from the commit's tree (Python: the YAML files that may
    be conda environments, `languages.python.conda`)."""
    dependency_files: tuple[str, ...] = ()
    """Root files whose change means the environment must be installed again."""
    declared_version: Callable[[Files], tuple[int, ...] | None] = _no_version
    """The minimum toolchain version the repository declares, or None."""
    dependency_problem: Callable[[Files, set[str]], str | None] = _no_problem
    """Why the dependencies cannot be installed in the sandbox (a registry it cannot reach), else None."""
    recipes: Callable[[Files, set[str], str], tuple[list[EnvRecipe], str | None]] | None = None
    """(recipes for one image, why none) from the repository's own files."""
    era_recipes: Callable[[Files, set[str], str, datetime | None], list[EnvRecipe]] | None = None
    """Recipes for one image that resolve the dependencies as of the commit (its committer date, None: unknown), tried
    before every image's `recipes`: the ladder is the commit's era, then today's releases, then the agent."""
    image_order: Callable[[Files], list[str]] | None = None
    """Its own order of `images` for a repository (Python: nearest to the declared version), else by
    `declared_version`."""
    missing_image: str = ""
    """The problem when none of its images is on the engine; empty: the generic one, and the repository is not
    buildable on this machine at all."""
    protects: Callable[[str, bool], bool] = field(default=lambda path, new: False)
    """Whether an agent's change to `path` (`new`: a path that did not exist) is dropped: the files that configure
    its runners or take over how its tests run (`harness.protection`)."""
    dependencies_fixed: bool = False
    """Its `dependency_files` (manifests and lock files, at any depth) are the environment's, not a fix's: the image
    was installed from them, so a diff's change to them installs nothing, and they configure how the tests are built
    and run (package.json's `bin`, which `npx` runs before node_modules/.bin; Cargo.toml's `[lib] path`, `[[test]]
    harness`, profile `rustflags`; go.mod's `replace`). An agent's change to them is reset, as test code is, unless
    the gold patch changes them too (`harness.protection`)."""
    test_code: Callable[[str], bool] = field(default=lambda path: False)
    """Whether `path` is test code by this language's conventions (`tests/test_x.py`, `x_test.go`, `x.spec.ts`): an
    agent's change to test code the task does not own is reset before the checks (`harness.protection`), since the
    task's test patch brings every test change a fix needs."""
    ca_env_vars: tuple[str, ...] = ()
    """Where its tools look for extra CA certificates (set to the mounted bundle)."""
    seed_languages: tuple[str, ...] = ()
    """The seed's `language` values that mean this pack; the first is also its `install_config` key."""
    seed_rank: int = 0
    """Which packs a seed task is matched to first (lower first; equal ranks: an `install_config` key wins)."""
    seed_image: Callable[[str, str, bool], str | None] | None = None
    """(the seed's version for it, the default image, whether the default is a local base image) -> the image of a
    seed task of this language, or None: not this way (`environments.seed`). Without it: the local image whose
    version meets the seed's, only when the default image is a local base image."""
    seed_major_only: bool = False
    """The seed names versions by their major number alone (Java: `1.8` is 8)."""
    seed_install: Callable[[str, str], str] | None = None
    """(the seed's install, its version for this pack) -> the install as it must run (`environments.seed`)."""
    debian_packages: str = ""
    """The Debian packages of its toolchain image (read by `scripts/build-toolchain-image.sh`)."""
    image_build: Callable[[str], ImageBuild | None] | None = None
    """How to build one of its `images` (tag) other than from its Debian packages on a base image of the tag's suite
    (`environments.toolchain_images`), or None: that way."""
    runtime_probe: str = ""
    """Shell lines that print `name=value` runtime facts of a built environment (`python-version=3.13.5`), run when
    its install wrote no record of its own (`recipe.RUNTIME_FILE`); it must print nothing in another language's
    environment (Python's asks the environment's own venv, which only a Python install makes)."""
    written_tests_problem: str = ""
    """Why tests the test agent writes could not run (a PR without tests then cannot become a task); empty: they
    can."""
    review_signs: tuple[tuple[str, str], ...] = ()
    """(regex, what it is) for a line a diff adds that reaches into how its tests run or are reported: the runner's
    internals, start-up hooks, writers at exit, the test binary's own arguments. A match never decides a verdict
    (honest fixes can need them); it is recorded in the result for a person to look at (`harness.review`)."""
    compiled: bool = False
    """Whether its install compiles (its recipes end with `recipe.RETOUCH`)."""
    extends_default: bool = False
    """A default-language package's compiled extensions may be written in it: a change in them, in a repository
    with the default language's manifests, is tested from the default language."""
    default_image: str = ""
    """The image a repository that declares no version is tested on (the demo builds it)."""
    test_file_patterns: tuple[str, ...] = ()
    """Regexes (on the file name, or on the path when they hold a `/`) of its test files by convention (`test_*.py`,
    `*_test.go`, `*.spec.ts`, `src/test/`): with the product's generic rules (`common.paths`), they split a PR into
    its fix and its tests (`registry.is_test_path`)."""
    config_probes: Mapping[str, ConfigProbe] = field(default_factory=dict)
    """Runner name -> how to read its effective configuration in a box (`ConfigProbe`); a runner without one has
    only its protected files."""
    config_sections: ConfigSections | None = None
    """Shared files of which a change is dropped only when it changes its runner's section."""
    module_key: Callable[[str], tuple[str, int] | None] | None = None
    """(module name, place in the import system's order) of a file an import of this language finds by a module name
    (`src/range.js` -> (`src/range`, 1)), or None: a new file found before an existing one of the same name is a
    shadow (`harness.module_names`). None: it has no shadowing rules."""
    import_roots: Callable[[Sandbox, Sequence[str], str], list[str] | None] | None = None
    """(the sanity box, the task's test files, its test command) -> the repo-relative directories its in-process
    runner imports top-level modules from, or None: it cannot say."""
    new_modules: Callable[[Sandbox, Changes, Collection[str] | None], list[str]] | None = None
    """(the verification box, the diff's changes, `import_roots`' answer or None) -> the new files that make a new
    top-level module an import can find in place of an installed one (reset whatever their names)."""
    proof_file: Callable[[str], bool] | None = None
    """Which test files the environment agent's replay runs to prove an install (`registry.proof_file`); None:
    those any of its runners runs."""
    id_files: Callable[[Sequence[str], Iterable[str]], list[str]] | None = None
    """(a task's test ids, the files its test patch touches) -> the test files to hand its test command (the files
    pytest ids name); empty: not its; None: it never says (`registry.run_files`)."""
    command_files: Callable[[Iterable[str]], list[str]] | None = None
    """The repo-relative test files named in shell check commands (commands mode), or None: it names none."""
    plain_command: Callable[[str], bool] = _not_plain
    """Whether a test command's exit status is its runner's (no `||`, `;` or pipe could hide it): its canaries can
    then trust a status 0 to mean every test passed."""
    command_canaries: CommandCanaries | None = None
    """Its canaries for commands mode (`CommandCanaries`); None: commands mode has none of its."""
    agent_command: Callable[[str], str] | None = None
    """The environment agent's test command in its own form made a recipe's (`AgentHints.submit_forms` False);
    ValueError with what to change."""
    dist_name_files: tuple[str, ...] = ()
    """Root files a distribution's name is read from (setuptools-scm's pretend version is scoped to it), in order."""
    dependency_part: Callable[[str, bytes], bytes] | None = None
    """(file name, its content) -> what of a dependency file decides the install (a version bump in a manifest does
    not make an image stale); None: all of it."""
    install_outputs: tuple[str, ...] = ()
    """Top-level names (globs) of what its install writes into /repo, kept when /repo is replaced by a base tree in
    an environment image that records no outputs of its own (older builds: `repo_box.prepare_script`)."""
    index_probe: str = ""
    """A shell command that fetches one small package from the package index its installs use: when it fails in a
    sandbox, no recipe that installs from the index is worth a build (`environments.environment`); empty: none."""

    @property
    def default_runner(self) -> Runner:
        return self.runners[0]

    def usable_images(
        self, files: Files, available: Callable[[str], bool] | None = None, needed: tuple[int, ...] | None = None
    ) -> list[str]:
        """Its images on the engine (`available`), those whose version meets the repository's declared minimum
        (or `needed`) first; `image_order` decides instead when the pack has one."""
        if self.image_order is not None and needed is None:
            ordered = self.image_order(files)
        else:
            needed = needed or self.declared_version(files)

            def fits(version: str) -> bool:
                return needed is None or version_numbers(version) >= needed

            images = self.images
            ordered = sorted(images, key=lambda tag: (not fits(images[tag]), version_numbers(images[tag])))
        return [tag for tag in ordered if available is None or available(tag)]

    def seed_task_image(self, version: str, default_image: str, local: bool) -> str | None:
        """The image of a seed task of this language that asks for `version` (see `seed_image`), or None."""
        if self.seed_image is not None:
            return self.seed_image(version, default_image, local)
        if not local or not self.images:
            return None
        numbers = tuple(int(n) for n in re.findall(r"\d+", version))
        if self.seed_major_only and numbers[:1] == (1,):
            numbers = numbers[1:]
        needed = numbers[: 1 if self.seed_major_only else 2] or None
        return self.usable_images({}, needed=needed)[0]

    def all_files(self) -> tuple[str, ...]:
        """Every root file the pack reads, manifests first."""
        return tuple(dict.fromkeys((*self.manifests, *self.read_files)))

    def files_to_read(self, tree: set[str]) -> tuple[str, ...]:
        """Every file its recipes read at a commit whose files are `tree`: the root ones, then `tree_files`."""
        return tuple(dict.fromkeys((*self.all_files(), *self.tree_files(tree))))
