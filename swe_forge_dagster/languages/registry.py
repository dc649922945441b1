"""The registry of language packs: every question the rest of the code asks about a language is answered here.

The packs are listed once (`languages.installed`: the built-in ones, then those installed distributions
declare), in the order that decides between languages when nothing else does: a repository with the
manifests of several is the first one's. Runner adapters are found by name (`runner_for`) or by the
command they read (`runner_of`, as SWE-bench's `PARSER_REGISTRY` maps a repository to its log parser).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from swe_forge_dagster.common import paths as common_paths
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.languages.installed import DEFAULT_PACK, DEFAULT_RUNNER, PACKS
from swe_forge_dagster.languages.pack import (
    AgentHints,
    CanaryChecks,
    Changes,
    ConfigProbe,
    Files,
    LanguagePack,
    RunnerHints,
)

if TYPE_CHECKING:
    from swe_forge_dagster.execution.canaries import Planted
    from swe_forge_dagster.execution.sandbox import Sandbox

__all__ = ["AgentHints", "CanaryChecks", "ConfigProbe", "LanguagePack", "RunnerHints"]
"""The interface's types, for the modules that may ask only the registry."""

_BY_NAME = {language.name: language for language in PACKS}
_RUNNERS = {runner.name: runner for language in PACKS for runner in language.runners}


def packs() -> tuple[LanguagePack, ...]:
    """Every registered pack, in priority order."""
    return PACKS


def pack(name: str) -> LanguagePack:
    """The pack named `name`; ValueError names the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown language {name!r} (known: {', '.join(_BY_NAME)})") from None


def is_default(toolchain: str | None) -> bool:
    """Whether `toolchain` (None: not known) is tested on the base images, as the default language is."""
    return toolchain is None or toolchain == DEFAULT_PACK.name


def root_files() -> tuple[str, ...]:
    """Every root manifest that recognises a pack."""
    return tuple(dict.fromkeys(name for language in PACKS for name in language.manifests))


def change_language(files: Sequence[str]) -> str | None:
    """The pack most of a change's files are written for (None: no source file any pack knows)."""
    by_suffix = {suffix: language.name for language in reversed(PACKS) for suffix in language.extensions}
    counts = Counter(by_suffix[suffix] for f in files if (suffix := PurePosixPath(f).suffix) in by_suffix)
    return counts.most_common(1)[0][0] if counts else None


def pack_of(present: set[str], changed: Sequence[str] = ()) -> LanguagePack | None:
    """The pack of a repository whose root holds the files `present`, for a change of the files `changed`.

    When it has the manifests of several, the language of the change decides (a Python project with a
    `package.json` for its docs stays Python); a default-language package with compiled extensions is
    tested from the default language when the change is in them. None: no pack recognises it.
    """
    found = {language.name for language in PACKS if any(name in present for name in language.manifests)}
    wanted = change_language(changed)
    default = DEFAULT_PACK.name
    if wanted == default or (default in found and (wanted is None or _BY_NAME[wanted].extends_default)):
        return DEFAULT_PACK
    if wanted in found:
        return _BY_NAME[wanted]
    return next((language for language in PACKS if language.name in found), None)


def toolchain_of(present: set[str], changed: Sequence[str] = ()) -> str | None:
    """The name of `pack_of(present, changed)`, or None."""
    found = pack_of(present, changed)
    return found.name if found else None


def toolchain_images(
    toolchain: str,
    files: Files,
    available: Callable[[str], bool] | None = None,
    needed: tuple[int, ...] | None = None,
) -> list[str]:
    """The local images of `toolchain`'s pack, those whose version meets the repository's declared minimum
    (or `needed`) first."""
    return pack(toolchain).usable_images(files, available, needed)


def all_images() -> dict[str, dict[str, str]]:
    """Pack name -> its local images (tag -> version)."""
    return {language.name: dict(language.images) for language in PACKS}


def toolchain_tags() -> tuple[str, ...]:
    """The tags of every toolchain image (the packs' other than the default one, whose images are the base
    images)."""
    return tuple(tag for language in PACKS if language is not DEFAULT_PACK for tag in language.images)


def runners() -> dict[str, Runner]:
    """Every runner adapter by name, in pack order."""
    return dict(_RUNNERS)


def runner_for(name: str | None = None) -> Runner:
    """The adapter named `name` (None: the default one); ValueError names the known ones."""
    if name is None:
        return DEFAULT_RUNNER
    try:
        return _RUNNERS[name]
    except KeyError:
        raise ValueError(f"unknown test runner {name!r} (known: {', '.join(sorted(_RUNNERS))})") from None


def runner_of(command: str) -> Runner:
    """The adapter a test command is read with: the default runner when the command runs it (whatever its
    arguments say: `-p no:doctest`, `-k "not jest"`, `tests/mocha/`), else the first whose command word is in it,
    else the default runner."""
    if re.search(DEFAULT_RUNNER.detect, command):
        return DEFAULT_RUNNER
    for runner in _RUNNERS.values():
        if runner is not DEFAULT_RUNNER and re.search(runner.detect, command):
            return runner
    return DEFAULT_RUNNER


def pack_of_runner(runner: Runner) -> LanguagePack:
    """The pack whose adapter `runner` is."""
    return next(language for language in PACKS if runner in language.runners)


def dependency_files() -> tuple[str, ...]:
    """Root files whose change means an environment must be installed again, every pack's, in pack order."""
    return tuple(dict.fromkeys(name for language in PACKS for name in language.dependency_files))


def install_outputs() -> tuple[str, ...]:
    """Every pack's `install_outputs`: what a replaced /repo keeps in an image that records no outputs of its own."""
    return tuple(dict.fromkeys(name for language in PACKS for name in language.install_outputs))


def plugins_off() -> str:
    """Every runner's `plugins_off` line, for shell checks whose runner is not known (commands mode)."""
    return "".join(dict.fromkeys(runner.plugins_off for runner in _RUNNERS.values()))


def runtime_probes() -> str:
    """Every pack's `runtime_probe`, one shell script (each line's failure is its own)."""
    return "\n".join(language.runtime_probe for language in PACKS if language.runtime_probe)


def review_signs() -> tuple[tuple[str, str], ...]:
    """Every pack's `review_signs` (a payload can sit in a file of any language)."""
    return tuple(sign for language in PACKS for sign in language.review_signs)


def ca_env_vars() -> tuple[str, ...]:
    """Every pack's tools' CA certificate variables."""
    return tuple(dict.fromkeys(name for language in PACKS for name in language.ca_env_vars))


def protected(path: str, new: bool = False) -> bool:
    """Whether any pack protects `path` from an agent's change (`new`: the path did not exist before)."""
    return any(language.protects(path, new) for language in PACKS)


def is_fixed_dependency_file(path: str) -> bool:
    """Whether `path` is a dependency file of a pack whose dependencies the environment fixes
    (`LanguagePack.dependencies_fixed`): `package.json`, `Cargo.toml`, `go.mod` and their lock files, at any depth."""
    name = PurePosixPath(path).name
    return any(language.dependencies_fixed and name in language.dependency_files for language in PACKS)


_TEST_NAMES = [re.compile(p) for language in PACKS for p in language.test_file_patterns if "/" not in p]
_TEST_PATHS = [re.compile(p) for language in PACKS for p in language.test_file_patterns if "/" in p]


def is_test_path(path: str) -> bool:
    """Whether `path` is test code by the product's one set of rules, which split a PR into its fix and its tests:
    the generic ones (`common.paths`: `tests/`, `testing/`, `__mocks__/`, `testdata/`, `fixtures/`) and every pack's
    `test_file_patterns` (on the file name, or on the path when they hold a `/`)."""
    if common_paths.is_generic_test_path(path):
        return True
    name = PurePosixPath(path).name
    return any(p.fullmatch(name) for p in _TEST_NAMES) or any(p.search(path) for p in _TEST_PATHS)


def is_test_code(path: str) -> bool:
    """Whether `path` is test code: by the product's one set of rules, which split a PR into its fix and its tests
    (`is_test_path`), or by a pack's own (`LanguagePack.test_code`)."""
    return is_test_path(path) or any(language.test_code(path) for language in PACKS)


def seed_task_image(install_config: Mapping[str, object], language: str, default_image: str) -> str:
    """The image a seed task runs on, from its `install_config` and language (`environments.seed`).

    Packs are tried by `seed_rank`; among packs of one rank, one named by an `install_config` key wins
    over one named by the language. The default pack decides when none does.
    """
    local = default_image in DEFAULT_PACK.images
    wanted = (language or "").lower()
    for rank in sorted({p.seed_rank for p in PACKS if p.seed_languages and p is not DEFAULT_PACK}):
        group = [p for p in PACKS if p.seed_rank == rank and p.seed_languages and p is not DEFAULT_PACK]
        chosen = next((p for p in group if install_config.get(p.seed_languages[0])), None) or next(
            (p for p in group if wanted in p.seed_languages), None
        )
        if chosen is not None:
            version = str(install_config.get(chosen.seed_languages[0]) or "")
            if (image := chosen.seed_task_image(version, default_image, local)) is not None:
                return image
    version = str(install_config.get(DEFAULT_PACK.seed_languages[0]) or "")
    return DEFAULT_PACK.seed_task_image(version, default_image, local) or default_image


def seed_install(install_config: Mapping[str, object], install: str) -> str:
    """A seed task's install as it must run (the default pack's runs in its virtual environment)."""
    for language in PACKS:
        if language.seed_install is not None:
            install = language.seed_install(install, str(install_config.get(language.seed_languages[0]) or ""))
    return install


def config_probe(runner: Runner) -> ConfigProbe | None:
    """How to read `runner`'s effective configuration in a box (its pack's `config_probes`), or None: it has none."""
    return pack_of_runner(runner).config_probes.get(runner.name)


def config_section_files() -> frozenset[str]:
    """Shared files of which only a runner's section is its configuration (every pack's `config_sections`)."""
    return frozenset(name for language in PACKS if language.config_sections for name in language.config_sections.files)


def config_section(name: str, text: bytes | None) -> object:
    """The runners' sections of the shared file `name` (`text`: its bytes, None: absent), comparable with `==`."""
    return tuple(
        language.config_sections.section(name, text)
        for language in PACKS
        if language.config_sections is not None and name in language.config_sections.files
    )


def module_key(path: str) -> tuple[str, str, int] | None:
    """(pack, module name, place in that language's import order) of `path`, from the first pack whose
    `module_key` knows it; None: no import of any language finds it by a module name."""
    for language in PACKS:
        if language.module_key is not None and (key := language.module_key(path)) is not None:
            return language.name, key[0], key[1]
    return None


def import_roots(runner: Runner, box: Sandbox, files: Sequence[str], test_command: str) -> list[str] | None:
    """The directories `runner`'s checks import top-level modules from (its pack's `import_roots`), or None."""
    roots = pack_of_runner(runner).import_roots
    return roots(box, files, test_command) if roots is not None else None


def new_modules(box: Sandbox, changes: Changes, roots: Collection[str] | None) -> list[str]:
    """Every pack's `new_modules` of a diff's `changes` in the verification `box`, each path once."""
    found = [path for language in PACKS if language.new_modules for path in language.new_modules(box, changes, roots)]
    return list(dict.fromkeys(found))


def command_test_files(commands: Iterable[str]) -> list[str]:
    """The repo-relative test files shell check commands name (every pack's `command_files`), in order."""
    commands = list(commands)
    found = [path for language in PACKS if language.command_files for path in language.command_files(commands)]
    return list(dict.fromkeys(found))


def run_files(ids: Sequence[str], fallback: Iterable[str]) -> list[str]:
    """The test files to hand a task's test command for its test `ids`: the first pack's `id_files` answer, else
    `fallback` (the files its test patch touches) whole."""
    fallback = list(fallback)
    for language in PACKS:
        if language.id_files is not None and (files := language.id_files(ids, fallback)):
            return files
    return fallback


def exit_status_is_runners(command: str) -> bool:
    """Whether a test command's exit status is its runner's (a pack's `plain_command` says so)."""
    return any(language.plain_command(command) for language in PACKS)


def command_canaries(fail_to_pass: Sequence[str], read: Callable[[str], bytes]) -> Planted | None:
    """Canaries for a commands-mode task (the first pack's `command_canaries` that can plant them), or None."""
    for language in PACKS:
        if language.command_canaries is not None:
            planted = language.command_canaries.plant(fail_to_pass, read)
            if planted is not None:
                return planted
    return None


def command_ids(command: str) -> list[str]:
    """The test ids a commands-mode check selects (the first pack that reads any), or []: what its twins run apart
    are judged by."""
    for language in PACKS:
        if language.command_canaries is not None and (ids := language.command_canaries.ids(command)):
            return ids
    return []


def canary_checks(fail_to_pass: Sequence[str], planted: Planted) -> CanaryChecks | None:
    """The shell checks of commands-mode canaries `planted` (the pack's whose they are), or None."""
    for language in PACKS:
        if language.command_canaries is not None:
            checks = language.command_canaries.checks(fail_to_pass, planted)
            if checks is not None:
                return checks
    return None


_NO_HINTS = RunnerHints(targets="the test files", naming="", example="", id_form="")


def runner_hints(runner: Runner) -> RunnerHints:
    """What the agents are told about `runner` (its pack's hints; a runner its pack gives none has the defaults:
    the replay and the checks still ask it)."""
    return pack_of_runner(runner).hints.runners.get(runner.name, _NO_HINTS)


def proof_file(language: LanguagePack) -> Callable[[str], bool]:
    """Which test files (under a test path) prove an environment of `language` when its recipe's tests run them:
    its `proof_file`, else those any of its runners runs."""
    if language.proof_file is not None:
        return language.proof_file
    return lambda path: any(runner.runs(path) for runner in language.runners)


def written_test(runner: Runner, path: str) -> bool:
    """Whether a file the test agent wrote is one `runner` is given (`RunnerHints.written_test`, else a test path it
    runs)."""
    own = runner_hints(runner).written_test
    return own(path) if own is not None else is_test_path(path) and runner.runs(path)


def dist_name_files() -> tuple[str, ...]:
    """Root files a distribution's name is read from, every pack's, in order."""
    return tuple(dict.fromkeys(name for language in PACKS for name in language.dist_name_files))


def dependency_part(name: str, content: bytes) -> bytes:
    """What of the dependency file `name` decides the install (its pack's `dependency_part`; else all of it)."""
    for language in PACKS:
        if language.dependency_part is not None and name in language.dependency_files:
            return language.dependency_part(name, content)
    return content
