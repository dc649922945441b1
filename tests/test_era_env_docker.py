"""Era-true Python environments built for real (issue 22): two small repositories made here reproduce two classes.

- A test class with a nose-style `def setup(self):` (pytest 7 calls it, pytest 8 no longer does), committed in
  June 2022: the first recipe resolves as of the commit's era, so the environment gets pytest 7.x and the test
  passes; the image records the date, the interpreter and pytest.
- A pyproject.toml whose build-system pins `setuptools~=62.6` (no PEP 660 `build_editable` hook): the environment
  installs it editable without build isolation, and its test runs.
- A package that asks for Python 3.12 (`requires-python`, and code only 3.12 parses): no flag, no script by hand;
  the base image of Debian trixie (Python 3.13) is built on first need from bookworm's and the tests pass there.

Needs Docker, the local base images and PyPI (through the host CA bundle).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.tasks.manifest_env import find_manifest_environment
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE, require_image
from tests.support.dated_repo import dated_repo

pytestmark = pytest.mark.docker
ExecutorFor = Callable[[RepoCache], TaskExecutor]
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
JUNE_2022 = "2022-06-15T12:00:00+00:00"
NOSE_STYLE = {
    "setup.py": "from setuptools import setup\nsetup(name='nosey', version='1.0', py_modules=['nosey'])\n",
    "nosey.py": "def double(x):\n    return 2 * x\n",
    "tests/test_nosey.py": (
        "from nosey import double\n\n\n"
        "class TestDouble:\n"
        "    def setup(self):\n"
        "        self.value = 21\n\n"
        "    def test_double(self):\n"
        "        assert double(self.value) == 42\n"
    ),
}
OLD_SETUPTOOLS = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools~=62.6", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tinypkg"\nversion = "0.1.0"\n'
    ),
    "tinypkg/__init__.py": "def answer():\n    return 42\n",
    "tests/test_tinypkg.py": (
        "import tinypkg\n\n\ndef test_answer():\n    assert tinypkg.answer() == 42\n\n\n"
        "def test_editable():\n    assert 'site-packages' not in tinypkg.__file__\n"
    ),
}

NEW_PYTHON = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "typed"\nversion = "0.1.0"\nrequires-python = ">=3.12"\n'
    ),
    "typed/__init__.py": "type Pair = tuple[int, int]\n\n\ndef swap(p: Pair) -> Pair:\n    return p[1], p[0]\n",
    "tests/test_typed.py": "from typed import swap\n\n\ndef test_swap():\n    assert swap((1, 2)) == (2, 1)\n",
}


@pytest.fixture
def executor_for(docker_client: docker.DockerClient) -> ExecutorFor:
    require_image(docker_client, BASE_IMAGE, f"scripts/build-base-image.sh {BASE_IMAGE}")

    def make(cache: RepoCache) -> TaskExecutor:
        sandbox = sandbox_config(build=True, image=BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
        return TaskExecutor(docker_client, cache, sandbox)

    return make


def test_a_2022_repository_with_nose_style_setup_gets_pytest_7_and_passes(
    executor_for: ExecutorFor, tmp_path: Path
) -> None:
    cache, sha = dated_repo(tmp_path, NOSE_STYLE, JUNE_2022)
    executor = executor_for(cache)
    found = find_manifest_environment(executor, "o/r", sha, ["tests/test_nosey.py"])
    assert found.recipe is not None and found.image is not None, found.problem
    assert found.rung == "manifest-era" and not found.tried, found.tried
    record = runtime_record(executor.client, found.image)
    assert record["pytest-version"].startswith("7."), record
    # Python 3.9 existed in June 2022: its era recipe resolves as of the commit itself and comes before 3.11's,
    # which would be clamped to 3.11.0's release (2022-10-24) and get releases the commit never saw
    assert record["resolution-date"] == "2022-06-15T12:00:00Z"
    assert record["python-version"].startswith("3.9.")
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["tests/test_nosey.py"], 300)
    assert run.outcomes == {"tests/test_nosey.py::TestDouble::test_double": "passed"}, run.error


@pytest.mark.parametrize(("date", "rung"), [(JUNE_2022, "manifest-era"), ("", "manifest")], ids=["era", "today"])
def test_a_build_backend_pinned_before_pep_660_installs_editable(
    executor_for: ExecutorFor, tmp_path: Path, date: str, rung: str
) -> None:
    """On both rungs: an old commit's era recipe (uv) and a young commit's recipe of today's releases (pip)."""
    cache, sha = dated_repo(tmp_path, OLD_SETUPTOOLS, date or datetime.now(UTC).isoformat())
    executor = executor_for(cache)
    found = find_manifest_environment(executor, "o/r", sha, ["tests/test_tinypkg.py"])
    assert found.recipe is not None and found.image is not None, found.problem
    assert found.rung == rung and not found.tried, found.tried
    assert "--no-build-isolation" in found.recipe.install_commands[-1]
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["tests/test_tinypkg.py"], 300)
    assert set((run.outcomes or {}).values()) == {"passed"} and len(run.outcomes or {}) == 2, run.error


def test_a_package_asking_for_python_3_12_runs_on_a_base_image_built_on_first_need(
    executor_for: ExecutorFor, tmp_path: Path
) -> None:
    cache, sha = dated_repo(tmp_path, NEW_PYTHON, datetime.now(UTC).isoformat())
    executor = executor_for(cache)
    found = find_manifest_environment(executor, "o/r", sha, ["tests/test_typed.py"])
    assert found.recipe is not None and found.image is not None, found.problem
    assert found.recipe.base_image == "swe-forge-base:trixie" and not found.tried, found.tried
    record = runtime_record(executor.client, found.image)
    assert record["python-version"].startswith("3.13."), record
    archive = write_tree_archive(cache, "o/r", sha, tmp_path / "tree.tar")
    run = executor.run_tests(found.image, archive, [], found.recipe, ["tests/test_typed.py"], 300)
    assert run.outcomes == {"tests/test_typed.py::test_swap": "passed"}, run.error
