"""The Node pack: package.json repositories (JavaScript/TypeScript), tested with mocha, jest or vitest.

Recipes: `npm ci` with a lock file, else `npm install` (then the same without install scripts,
which often download browsers or binaries from hosts a sandbox cannot reach), for an old commit without a lock
file first as of the commit's date (`languages.node.era`: npm's `before`); the runner is the one
the package depends on (vitest, jest, mocha), with mocha's options from the `test` scripts. The
parsers are in `languages.node.reports`.

Images: Debian's nodejs + npm (`swe-forge-node:bookworm` Node 18, `:trixie` Node 20), and one per
Node major from 16 to 26 built on first need from the npm registry (`swe-forge-node:<major>`,
`languages.node.image`). A repository that declares nothing runs on the Debian images, as it always did; one
that declares a version (`.nvmrc`, `.node-version`, `volta.node`, `engines.node`; `languages.node.versions`)
runs on the highest major that satisfies it, a Debian image of that major first (already built).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import PurePosixPath

from swe_forge_dagster.execution.era import is_old
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.runners import Runner, SwebenchLog, anchored, command_word, title_at_end
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.execution.toolchains import json_object, registry_reachable, version_numbers
from swe_forge_dagster.languages.node import config as node_config
from swe_forge_dagster.languages.node import image as node_image
from swe_forge_dagster.languages.node import modules as node_modules
from swe_forge_dagster.languages.node import reports as node_reports
from swe_forge_dagster.languages.node.canaries import plant_node
from swe_forge_dagster.languages.node.era import LOCK_FILES, dates_plausible, era_recipe
from swe_forge_dagster.languages.node.versions import declared_range, majors_satisfying
from swe_forge_dagster.languages.pack import AgentHints, ConfigProbe, Files, LanguagePack, RunnerHints
from swe_forge_dagster.settings import get_settings

MOCHA = "npx --no-install mocha --exit --reporter xunit --reporter-options output={report} {tests}"
JEST = "npx --no-install jest --ci --json --outputFile={report} {tests}"
VITEST = "npx --no-install vitest run --reporter=json --outputFile={report} {tests}"
NPM_FLAGS = "--no-audit --no-fund --loglevel=error"
DEBIAN_IMAGES = {"swe-forge-node:bookworm": "18", "swe-forge-node:trixie": "20"}
NODE_IMAGE = next(iter(DEBIAN_IMAGES))
"""The default Node.js toolchain image (Debian's nodejs + npm), for repositories that declare no version."""
IMAGES = {**DEBIAN_IMAGES, **{node_image.TAG.format(major=major): str(major) for major in node_image.MAJORS}}
RUNNER_CONFIG = re.compile(
    r"\.mocharc(\.(js|cjs|mjs|json|jsonc|ya?ml))?|(jest|vitest)\.config\.[cm]?[jt]s(on)?|vitest\.workspace\.[cm]?[jt]s"
    r"|karma\.conf\.[cm]?js|vite\.config\.[cm]?[jt]s|babel\.config\.[cm]?js(on)?|\.babelrc(\.[cm]?js|\.json)?|\.npmrc"
)
"""The runners' configuration (mocha, jest, vitest, karma; vite's, which vitest reads when it has none; babel's, which
transforms jest's test files) and npm's project settings (`node-options`, `script-shell`): they decide what runs and
how results are reported. What the loaders make of every other source is compared before and after the diff
(`languages.node.config`)."""
TEST_NAME = re.compile(r".+\.(test|spec)\.[cm]?[jt]sx?")
"""Jest's and Vitest's default test file names (`x.test.ts`, `x.spec.js`)."""


def node_test_code(path: str) -> bool:
    """Test code by the runners' defaults: `__tests__/` (jest), `test/` or `tests/` at the root (mocha's `./test`),
    `*.test.*` / `*.spec.*` files (jest, vitest)."""
    parts = PurePosixPath(path).parts
    return "__tests__" in parts or parts[:1] in (("test",), ("tests",)) or bool(TEST_NAME.fullmatch(parts[-1]))


_MOCHA_VALUE_OPTIONS = {"--require", "-r", "--timeout", "-t", "--ui", "-u", "--file", "--extension", "--slow", "-s"}
_MOCHA_FLAGS = {"--exit", "--recursive", "--full-trace", "--check-leaks", "--allow-uncaught"}


def _jest_title(test_id: str) -> str:
    """`-t` pattern for the jest test `test_id` (a bare title, as SWE-bench's jest ids are): names ending with it."""
    return title_at_end(test_id)


def _vitest_title(test_id: str) -> str:
    """`-t` pattern for the vitest test `file > A > title`: names ending with `A title`."""
    return title_at_end((test_id.split(" > ", 1)[1] if " > " in test_id else test_id).replace(" > ", " "))


_MOCHA_WORD = re.compile(command_word("mocha"))
_MOCHA_REPORTER = re.compile(r"\s(?:--reporter|-R|--reporter-options?|-O)(?:=|\s+)(?:'[^']*'|\"[^\"]*\"|[^\s'\";&|]+)")
_SEGMENT_END = re.compile(r"&&|\|\||[;|]")


def _mocha_tap(command: str) -> str:
    """Our mocha command printing TAP (`ok 1 <full title>`), which `parse_log_tap` reads: in mocha's own part of the
    command, the reporter it names and its options (quoted or not) dropped and `--reporter tap` given, since mocha
    runs one reporter. TAP drops `#` from titles, as our ids do."""
    word = _MOCHA_WORD.search(command)
    if word is None:
        return f"{command} --reporter tap"
    end = _SEGMENT_END.search(command, word.end())
    stop = end.start() if end else len(command)
    arguments = _MOCHA_REPORTER.sub("", command[word.end() : stop])
    return f"{command[: word.end()]} --reporter tap{arguments}{command[stop:]}"


MOCHA_RUNNER = Runner(
    name="mocha",
    parse=node_reports.parse_mocha_xunit,
    language="javascript",
    template=MOCHA,
    report_kind="mocha xunit",
    single_template="npx --no-install mocha --exit --grep {id} {tests}",
    detect=command_word("mocha"),
    suffixes=(".js", ".mjs", ".cjs", ".ts"),
    vendored=node_config.INSTALLED,
    plant=plant_node,
    twins_apart=True,
    single_id=anchored,
    swebench_log=SwebenchLog("parse_log_tap", _mocha_tap),
)
JEST_RUNNER = Runner(
    name="jest",
    parse=node_reports.parse_jest_json,
    language="javascript",
    template=JEST,
    report_kind="jest JSON",
    single_template="npx --no-install jest --ci -t {id} {tests}",
    detect=command_word("jest"),
    suffixes=(".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    vendored=node_config.INSTALLED,
    plant=plant_node,
    twins_apart=True,
    single_id=_jest_title,
)
VITEST_RUNNER = Runner(
    name="vitest",
    parse=node_reports.parse_vitest_json,
    language="javascript",
    template=VITEST,
    report_kind="vitest JSON",
    single_template="npx --no-install vitest run -t {id} {tests}",
    detect=command_word("vitest"),
    suffixes=(".js", ".jsx", ".mjs", ".ts", ".tsx", ".mts"),
    vendored=node_config.INSTALLED,
    plant=plant_node,
    twins_apart=True,
    single_id=_vitest_title,
)


def node_recipes(files: Files, tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """(recipes, why none) for a package.json project."""
    package = json_object(files.get("package.json"))
    deps = {**(package.get("dependencies") or {}), **(package.get("devDependencies") or {})}
    scripts = {str(k): str(v) for k, v in (package.get("scripts") or {}).items()}
    if "vitest" in deps:
        test = VITEST
    elif "jest" in deps:
        test = JEST
    elif "mocha" in deps:
        test = MOCHA.replace("{tests}", " ".join([*mocha_options(scripts), "{tests}"]))
    else:
        return [], "no test runner this can read in package.json (mocha, jest or vitest)"
    install = "npm ci" if "package-lock.json" in tree or "npm-shrinkwrap.json" in tree else "npm install"
    commands = [f"{install} {NPM_FLAGS}", f"{install} {NPM_FLAGS} --ignore-scripts"]
    return [EnvRecipe((command,), test, image) for command in commands], None


def node_era_recipes(files: Files, tree: set[str], image: str, committed: datetime | None) -> list[EnvRecipe]:
    """For an old commit without a lock file, on a registry whose publish times can be trusted (asked about the
    package's test runner): today's first recipe resolved as of the commit (`languages.node.era`)."""
    if committed is None or not is_old(committed) or any(lock in tree for lock in LOCK_FILES):
        return []
    recipes, _ = node_recipes(files, tree, image)
    runner = next((name for name in ("vitest", "jest", "mocha") if recipes and name in recipes[0].test_command), None)
    if runner is None or not dates_plausible(runner):
        return []
    return [era_recipe(recipes[0], committed)]


def mocha_options(scripts: Mapping[str, str]) -> list[str]:
    """The mocha options of the package's test scripts (`--timeout 30000`, `--require x`), files and globs left out:
    the runner is given the test files itself. Options in `.mocharc*` are read by mocha anyway."""
    options: list[str] = []
    for name, script in scripts.items():
        parts = re.split(r"&&|\|\||;", script)
        segments = (re.search(r"(?:^|[\s/])mocha(?:\s+(.*))?$", part.strip()) for part in parts)
        command = next((found for found in segments if found), None)
        if not name.startswith("test") or command is None:  # `npm run test:mocha` is not the command itself
            continue
        words = shlex.split(command.group(1) or "", posix=True)
        for index, word in enumerate(words):
            if word in _MOCHA_FLAGS and word not in options:
                options.append(word)
            elif word in _MOCHA_VALUE_OPTIONS and index + 1 < len(words) and word not in options:
                options += [word, shlex.quote(words[index + 1])]
            elif word.startswith(("--timeout=", "--require=", "--ui=")) and word not in options:
                options.append(shlex.quote(word))
        break
    return [option for option in options if option != "--exit"]  # the runner's command has it


def declared_version(files: Files) -> tuple[int, ...] | None:
    """The lowest major the declared range admits (`.nvmrc`, `.node-version`, `volta.node`, `engines.node`)."""
    declared = declared_range(files)
    majors = majors_satisfying(declared[1], range(0, 100)) if declared else []
    return (majors[0],) if majors else None


def image_order(files: Files) -> list[str]:
    """The images to try: with a declared version, the highest major that satisfies it first (LTS lines before the
    short-lived odd ones; a Debian image of a major before the one built from npm), then the Debian images;
    without one, the Debian images by version, then the newest LTS major: an undeclared package installs today's
    releases of its ranges when its era cannot be resolved, and those may need a newer Node than Debian's (mocha 11
    does not start on Node 18)."""
    debian = sorted(DEBIAN_IMAGES, key=lambda tag: version_numbers(DEBIAN_IMAGES[tag]))
    declared = declared_range(files)
    if declared is None:
        return [*debian, node_image.TAG.format(major=node_image.PREFERRED[0])]
    ordered: list[str] = []
    for major in majors_satisfying(declared[1], node_image.PREFERRED):
        ordered += [tag for tag in debian if DEBIAN_IMAGES[tag] == str(major)]
        ordered.append(node_image.TAG.format(major=major))
    return ordered + [tag for tag in debian if tag not in ordered]


def dependency_problem(files: Files, tree: set[str]) -> str | None:
    registry = get_settings().npm_registry
    if not registry_reachable(registry):
        return f"the npm registry ({registry}) is unreachable from the sandbox"
    return None


def seed_image(node: str, default_image: str, local: bool) -> str:
    """With local images, the image of the major the task names (`node: '20'` -> `swe-forge-node:20`, built on first
    need), the Debian image when it names none; with an official `python:*` default, `node:<major>-bookworm` (a
    machine with a registry); else the default."""
    majors = majors_satisfying(node, node_image.PREFERRED) if node.strip() else []
    if local:
        return node_image.TAG.format(major=majors[0]) if majors else NODE_IMAGE
    if re.fullmatch(r"python:3\.\d+(-slim|-bookworm|-bullseye)?", default_image):
        major = re.match(r"\d+", node.strip())
        return f"node:{major.group(0) if major else '20'}-bookworm"
    return default_image


def _config_probe(runner: str) -> ConfigProbe:
    """npm's and `runner`'s own loaders, asked after every diff (`languages.node.config`)."""

    def read(files: tuple[str, ...]) -> Callable[[Sandbox], object]:
        return lambda box: node_config.node_config(box, runner, files)

    return ConfigProbe(read, node_config.CONFIG_FILES, None, node_config.named_files)


PACK = LanguagePack(
    name="node",
    manifests=("package.json",),
    extensions=(".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
    runners=(MOCHA_RUNNER, JEST_RUNNER, VITEST_RUNNER),
    hints=AgentHints(
        title="JavaScript/TypeScript",
        image="Node.js and npm (the version the repository declares, else Debian's), git",
        install="Install with `npm ci --no-audit --no-fund` when there is a lock file, else `npm install --no-audit "
        "--no-fund`; add `--ignore-scripts` when install scripts download from hosts you cannot reach. node_modules "
        "stays in /repo. Build first (`npm run build`) only if the tests import the built output.",
        kept="the commands that install and build everything, starting from a fresh container of the same image "
        "with the same files in /repo. What they create inside /repo (node_modules, build directories) and outside "
        "it (caches, downloaded modules) is kept; the tests run offline.",
        runners={
            "mocha": RunnerHints(
                targets="the test files",
                naming="test/<name>.test.js, in the directory mocha's configuration reads (usually test/)",
                example="test/example.test.js",
                id_form="full titles: describe titles and the test title joined by spaces",
            ),
            "jest": RunnerHints(
                targets="the test files",
                naming="__tests__/<name>.test.js or <name>.test.js beside the code (.ts/.tsx for TypeScript)",
                example="__tests__/example.test.js",
                id_form="full titles",
            ),
            "vitest": RunnerHints(
                targets="the test files",
                naming="<name>.test.ts beside the code or test/<name>.test.ts (.js for JavaScript)",
                example="test/example.test.ts",
                id_form="file > describe > title",
            ),
        },
    ),
    images=IMAGES,
    read_files=(".nvmrc", ".node-version", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"),
    dependency_files=("package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"),
    dependencies_fixed=True,
    declared_version=declared_version,
    dependency_problem=dependency_problem,
    recipes=node_recipes,
    era_recipes=node_era_recipes,
    image_order=image_order,
    protects=lambda path, new: (
        bool(RUNNER_CONFIG.fullmatch(PurePosixPath(path).name)) or "node_modules" in PurePosixPath(path).parts
    ),  # installed packages, at any depth: the image's, never a fix's
    test_code=node_test_code,
    test_file_patterns=(r".*[._](test|spec|cy)\.[cm]?[jt]sx?", r"(?i)(^|/)specs?/.*\.[cm]?[jt]sx?$"),
    ca_env_vars=("NODE_EXTRA_CA_CERTS",),
    seed_languages=("node", "javascript", "typescript"),
    seed_rank=1,
    seed_image=seed_image,
    debian_packages="nodejs npm",
    image_build=node_image.image_build,
    review_signs=(
        (r"\b(?:mocha|jest|vitest|@jest|@vitest|jest-circus|jest-jasmine2)/", "reaches into a test runner's modules"),
        (r"""process\.on\(\s*['"](?:exit|beforeExit)['"]""", "runs code at process exit"),
        (r"\brequire\.cache\b|\bModule\._(?:load|resolveFilename)\b", "hooks the module loader"),
        (r"--reporter-options|--outputFile|--gtest_output|junit\.xml", "names the test report"),
        (r"\b(?:globalThis|global)\.(?:expect|it|test|describe|assert)\s*=(?!=)", "replaces a test framework global"),
        (r"""require\(\s*['"](?:node:)?child_process['"]|from\s+['"](?:node:)?child_process['"]""", "starts processes"),
    ),
    default_image=NODE_IMAGE,
    config_probes={runner.name: _config_probe(runner.name) for runner in (MOCHA_RUNNER, JEST_RUNNER, VITEST_RUNNER)},
    module_key=node_modules.module_key,
)
