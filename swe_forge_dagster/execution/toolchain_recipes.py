"""Environment recipes from the manifests of a JavaScript/TypeScript, Go, Rust, Java or C/C++ repository.

The counterpart of `execution.manifest` (Python) for the other toolchains: each recipe installs
what the repository's own files ask for and names the runner adapter's command
(`execution.runners`), and the caller proves it by running tests, as for Python. The install
builds everything once, so a run rebuilds only what its patches touched:

- node: `npm ci` with a lock file, else `npm install` (then the same without install scripts, which
  often download browsers or binaries from hosts a sandbox cannot reach); the runner is the one the
  package depends on (vitest, jest, mocha), with mocha's options from the `test` scripts.
- go: the test binaries compiled once (`go test -run '^$' ./...`, the build cache stays in the image);
  no network for modules (`GOPROXY=off`) unless the repository requires modules, vendored or not.
- rust: `cargo build --tests` (offline: a crate with crates.io dependencies was rejected before).
- java: Maven compiles the tests and resolves its plugins once, online (a Maven build is only tried when Maven
  Central answers), then runs offline; Gradle is not supported (its wrapper downloads itself).
- cpp: CMake configured and everything built with ccache, so a run that touches every file (below)
  recompiles only what changed; tests are GoogleTest executables named after their source file.

Compiled trees and stale builds: the environment image may have been built at another commit, and
the tree is copied in with its commit's timestamps, so make could take an old object for a changed
source. A recipe that compiles writes `RETOUCH` into the image: the repo box then gives every tree
file the current time, make rebuilds, and ccache/go's content-addressed cache keep that cheap.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping

from swe_forge_dagster.execution.environment import EnvRecipe
from swe_forge_dagster.execution.repo_box import ENV_DIR
from swe_forge_dagster.execution.runners import CARGO, GO_TEST, GTEST, JEST, MAVEN, MOCHA, VITEST

RETOUCH = f"mkdir -p {ENV_DIR} && touch {ENV_DIR}/retouch"
"""Run last by recipes that compile: containers from the image re-date the tree (see the module docstring)."""
NPM_FLAGS = "--no-audit --no-fund --loglevel=error"
CMAKE_CONFIGURE = (
    "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug $(command -v ccache >/dev/null && "
    "echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)"
)
_MOCHA_VALUE_OPTIONS = {"--require", "-r", "--timeout", "-t", "--ui", "-u", "--file", "--extension", "--slow", "-s"}
_MOCHA_FLAGS = {"--exit", "--recursive", "--full-trace", "--check-leaks", "--allow-uncaught"}


def node_recipes(files: Mapping[str, str], tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """(recipes, why none) for a package.json project."""
    package = _json(files.get("package.json"))
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


def go_recipes(files: Mapping[str, str], tree: set[str], image: str, proxy: str | None) -> list[EnvRecipe]:
    """The recipe for a Go module; `proxy` is the module proxy's URL when the module requires any (else off)."""
    mode = "vendor" if "vendor/modules.txt" in tree else "mod"
    env = f"export GOFLAGS=-mod={mode} GOPROXY={proxy or 'off'} GOTOOLCHAIN=local GOSUMDB=off CGO_ENABLED=0"
    install = f"{env} && go build ./... && go test -count=1 -run '^$' ./... && {RETOUCH}"
    return [EnvRecipe((install,), f"{env} && {GO_TEST}", image)]


def rust_recipes(image: str) -> list[EnvRecipe]:
    return [EnvRecipe((f"cargo build --offline --tests && {RETOUCH}",), CARGO, image)]


def java_recipes(files: Mapping[str, str], image: str) -> tuple[list[EnvRecipe], str | None]:
    if "pom.xml" not in files:
        return [], "a Gradle build (its wrapper and plugins are downloaded at build time)"
    # online: a Maven build is only tried when Maven Central answers (`toolchains.dependency_problem`); `test` with
    # -DskipTests also resolves Surefire, which the offline test runs need
    return [EnvRecipe((f"mvn -q -B test -DskipTests && {RETOUCH}",), MAVEN, image)], None


def cpp_recipes(files: Mapping[str, str], tree: set[str], image: str) -> tuple[list[EnvRecipe], str | None]:
    """A CMake project whose tests use GoogleTest (bundled, or found as a package)."""
    cmake = files.get("CMakeLists.txt", "")
    bundled = any(re.search(r"(^|/)(googletest|gtest)(/|$)", path) for path in tree)
    if not (bundled or re.search(r"GTest|gtest", cmake)):
        return [], "a CMake project without GoogleTest (no other C/C++ test runner is supported yet)"
    build = f'{CMAKE_CONFIGURE} && cmake --build build -j"$(nproc)" && {RETOUCH}'
    return [EnvRecipe((build,), GTEST, image)], None


def _json(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
