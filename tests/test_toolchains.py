"""Which toolchain, image and recipe a repository gets, and what stops it before any build or LLM call, on the real
repositories of `../shared/fixtures/repos` (manifests read from the git bundles, no Docker)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.go.pack import go_requirements
from swe_forge_dagster.languages.node.pack import mocha_options
from swe_forge_dagster.languages.registry import pack, runner_of, toolchain_images, toolchain_of
from swe_forge_dagster.languages.rust.pack import crates_io_dependencies
from tests.support.common import SHARED_FIXTURES

REPOS = SHARED_FIXTURES / "repos"
EVERY_IMAGE = lambda image: True  # noqa: E731 - every toolchain image counts as built


def clone(tmp_path: Path, repo: str) -> RepoCache:
    bundle = REPOS / f"{repo.replace('/', '+')}.bundle"
    if not bundle.is_file():
        pytest.skip(f"real fixture missing ({bundle.name})")
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(tmp_path / f"{repo}.git")], check=True)
    return RepoCache(tmp_path / "cache", f"file://{tmp_path}/{{repo}}.git")


def head(cache: RepoCache, repo: str, rev: str = "HEAD") -> str:
    path = cache.ensure(repo)
    cache.fetch(repo, [])
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", rev], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_change_decides_between_toolchains_and_manifests_decide_the_rest() -> None:
    assert toolchain_of({"package.json", "pyproject.toml"}, ["src/app.py"]) == "python"
    assert toolchain_of({"package.json", "pyproject.toml"}, ["lib/x.ts"]) == "node"
    assert toolchain_of({"CMakeLists.txt"}, ["include/fmt/ranges.h"]) == "cpp"
    assert toolchain_of({"go.mod"}, ["README.md"]) == "go"
    assert toolchain_of({"Makefile"}, ["x.c"]) is None


def test_images_meeting_the_declared_version_come_first() -> None:
    assert pack("go").declared_version({"go.mod": "module x\n\ngo 1.21\n"}) == (1, 21)
    assert toolchain_images("go", {"go.mod": "module x\ngo 1.21\n"}) == ["swe-forge-go:trixie", "swe-forge-go:bookworm"]
    assert toolchain_images("go", {"go.mod": "module x\ngo 1.13\n"})[0] == "swe-forge-go:bookworm"
    # Node: a declared version runs on the highest major that satisfies it (Debian's image of it first); nothing
    # declared: Debian's images, as before (tests/test_node_runtime.py has the ranges)
    assert toolchain_images("node", {".nvmrc": "v20.11\n"})[:2] == ["swe-forge-node:trixie", "swe-forge-node:20"]
    assert toolchain_images("node", {"package.json": '{"engines": {"node": ">=14"}}'})[0] == "swe-forge-node:26"
    assert toolchain_images("node", {}) == ["swe-forge-node:bookworm", "swe-forge-node:trixie", "swe-forge-node:26"]
    assert toolchain_images("node", {}, available=lambda tag: tag.endswith("trixie")) == ["swe-forge-node:trixie"]


def test_go_requirements_read_blocks_and_ignore_local_replacements() -> None:
    go_mod = (
        "module x\n\nrequire (\n\tgolang.org/x/sys v0.1.0 // indirect\n\tex.com/a v1.0.0\n)\n"
        "require ex.com/b v1.2.0\nreplace ex.com/a => ../a\n"
    )
    assert go_requirements(go_mod) == ["golang.org/x/sys", "ex.com/b"]


def test_itoa_is_rejected_before_any_build_naming_the_unreachable_dependency(tmp_path: Path) -> None:
    """dtolnay/itoa's only dependencies are dev-dependencies from crates.io (criterion), unreachable here."""
    cache = clone(tmp_path, "dtolnay/itoa")
    sha = head(cache, "dtolnay/itoa")
    cargo = (cache.show_file("dtolnay/itoa", sha, "Cargo.toml") or b"").decode()
    assert ("dev-dependency", "criterion") in crates_io_dependencies(cargo)
    found = environment_candidates(cache, "dtolnay/itoa", sha, ["src/lib.rs"], available=EVERY_IMAGE)
    assert found.toolchain == "rust" and not found.buildable and not found.recipes
    assert "dev-dependency" in (found.problem or "") and "crates.io" in (found.problem or "")
    assert "unreachable" in (found.problem or "")


def test_google_uuid_needs_no_module_and_gets_go_test_json(tmp_path: Path) -> None:
    cache = clone(tmp_path, "google/uuid")
    sha = head(cache, "google/uuid")
    found = environment_candidates(cache, "google/uuid", sha, ["uuid.go"], available=EVERY_IMAGE)
    assert found.toolchain == "go" and found.buildable, found.problem
    recipe = found.recipes[0]
    assert "GOPROXY=off" in recipe.install_commands[0] and runner_of(recipe.test_command).name == "go"


def test_axios_gets_mocha_with_its_own_options(tmp_path: Path) -> None:
    cache = clone(tmp_path, "axios/axios")
    base = "85740c3e7a1fa48346dfcbd4497f463ccb1c1b05"  # axios__axios-5085
    cache.fetch("axios/axios", [base])
    found = environment_candidates(cache, "axios/axios", base, ["lib/core/AxiosHeaders.js"], available=EVERY_IMAGE)
    assert found.toolchain == "node" and found.recipes, found.problem
    recipe = found.recipes[0]
    assert runner_of(recipe.test_command).name == "mocha" and "--timeout" in recipe.test_command
    assert recipe.install_commands[0].startswith("npm ")
    assert mocha_options({"test:mocha": "mocha test/unit/**/*.js --timeout 30000 --exit"}) == ["--timeout", "30000"]


def test_fmt_gets_a_cmake_build_with_googletest(tmp_path: Path) -> None:
    cache = clone(tmp_path, "fmtlib/fmt")
    base = "4b8bda25c05d9f959ffed9a0580f0ded623177e5"  # fmtlib__fmt-2457
    cache.fetch("fmtlib/fmt", [base])
    found = environment_candidates(cache, "fmtlib/fmt", base, ["include/fmt/ranges.h"], available=EVERY_IMAGE)
    assert found.toolchain == "cpp" and found.recipes, found.problem
    runner = runner_of(found.recipes[0].test_command)
    assert runner.name == "gtest" and runner.runs("test/ranges-test.cc") and not runner.runs("test/gtest/gtest-all.cc")
    assert runner.targets(["test/ranges-test.cc"]) == ["ranges-test"]


def test_rust_and_java_declare_their_minimum_release() -> None:
    assert pack("rust").declared_version({"Cargo.toml": '[package]\nrust-version = "1.68"\n'}) == (1, 68)
    assert pack("rust").declared_version({"rust-toolchain.toml": '[toolchain]\nchannel = "1.75"\n'}) == (1, 75)
    assert toolchain_images("rust", {"Cargo.toml": 'rust-version = "1.68"'})[0] == "swe-forge-rust:trixie"
    assert pack("java").declared_version({"pom.xml": "<maven.compiler.release>21</maven.compiler.release>"}) == (21,)
    assert pack("java").declared_version({"pom.xml": "<java.version>1.8</java.version>"}) == (8,)


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("pytest -p no:doctest {tests}", "pytest"),
        ("python -m pytest --doctest-modules {tests}", "pytest"),
        ('pytest -k "not jest" {tests}', "pytest"),
        ("pytest tests/mocha/test_x.py", "pytest"),
        ("npm test", "pytest"),
        ("./node_modules/.bin/mocha test", "mocha"),
        ("node bin/x.js mocha t/*.js", "mocha"),
        ("export GOFLAGS=-mod=mod && go test -json {tests} > {report}", "go"),
        ("ctest --output-on-failure", "gtest"),
    ],
)
def test_the_runner_is_the_command_word_not_a_word_in_an_argument(command: str, runner: str) -> None:
    assert runner_of(command).name == runner


def test_a_python_change_or_a_python_package_with_extensions_stays_python() -> None:
    assert toolchain_of({"package.json"}, ["app/models.py"]) == "python"  # requirements.txt only, docs tooling in npm
    assert toolchain_of({"pyproject.toml", "Cargo.toml"}, ["src/lib.rs"]) == "python"  # a maturin/pyo3 package
    assert toolchain_of({"Cargo.toml"}, ["src/lib.rs"]) == "rust"


def test_only_a_real_fetch_at_configure_time_is_a_download() -> None:
    dependency_problem = pack("cpp").dependency_problem
    homepage = 'project(fmt VERSION 10.0 HOMEPAGE_URL "https://fmt.dev")\n'
    assert dependency_problem({"CMakeLists.txt": homepage}, set()) is None
    fetch = "FetchContent_Declare(googletest\n  URL https://github.com/google/googletest/archive/v1.14.zip)\n"
    assert "github.com/google/googletest" in (dependency_problem({"CMakeLists.txt": fetch}, set()) or "")


def test_every_toolchain_image_builds_on_first_need() -> None:
    """No script by hand: a pack's Debian images from its packages on the base image of their suite, Node's
    majors from the npm registry (`environments.toolchain_images`)."""
    from swe_forge_dagster.environments.toolchain_images import build_of
    from swe_forge_dagster.languages.registry import packs

    for language in packs()[1:]:
        for tag in language.images:
            build = build_of(tag)
            assert build is not None, tag
            suite = tag.rpartition(":")[2]
            if build.context is None:
                assert (build.base, build.debian_packages) == (f"swe-forge-base:{suite}", language.debian_packages)


def test_a_missing_toolchain_image_is_built_only_when_its_base_is_here() -> None:
    import docker

    from swe_forge_dagster.environments import toolchain_images

    class Images:
        def __init__(self, present: set[str]) -> None:
            self.present, self.asked = present, []

        def get(self, tag: str) -> object:
            self.asked.append(tag)
            if tag not in self.present:
                raise docker.errors.ImageNotFound(tag)
            return object()

    class Client:
        def __init__(self, *present: str) -> None:
            self.images = Images(set(present))

    bare = Client()
    assert toolchain_images.ensure(bare, "swe-forge-env/o-r:abc") is False  # type: ignore[arg-type]
    assert bare.images.asked == []  # not a toolchain image: the engine is not even asked
    assert not toolchain_images.buildable(bare, "swe-forge-java:trixie")  # type: ignore[arg-type]
    with pytest.raises(docker.errors.ImageNotFound, match="needs the base image swe-forge-base:trixie"):
        toolchain_images.ensure(bare, "swe-forge-java:trixie")  # type: ignore[arg-type]
    assert toolchain_images.buildable(Client("swe-forge-base:trixie"), "swe-forge-java:trixie")  # type: ignore[arg-type]
    assert toolchain_images.ensure(Client("swe-forge-java:trixie"), "swe-forge-java:trixie") is False  # type: ignore[arg-type]
    # a later suite's base image chains on the suite before it: trixie's toolchains need only bookworm's base
    assert toolchain_images.buildable(Client("swe-forge-base:bookworm"), "swe-forge-java:trixie")  # type: ignore[arg-type]
    assert toolchain_images.buildable(Client("swe-forge-base:bookworm"), "swe-forge-base:trixie")  # type: ignore[arg-type]
    assert not toolchain_images.buildable(Client("swe-forge-base:trixie"), "swe-forge-base:bullseye")  # type: ignore[arg-type]


def test_a_later_suites_base_image_is_an_upgrade_of_the_suite_before_it() -> None:
    from swe_forge_dagster.environments.toolchain_images import build_of

    build = build_of("swe-forge-base:trixie")
    assert build is not None and build.base == "swe-forge-base:bookworm" and build.context is not None
    dockerfile = build.context()["Dockerfile"].decode()
    assert dockerfile.startswith("FROM swe-forge-base:bookworm\n")
    assert "s/\\bbookworm\\b/trixie/g" in dockerfile and "full-upgrade" in dockerfile and "python3-venv" in dockerfile
    assert build_of("swe-forge-base:bullseye") is None and build_of("swe-forge-base:bookworm") is None  # debootstrap
