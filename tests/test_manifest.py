"""Recipes, Python versions and the release version read from a repository's own files, no LLM."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.test_sample import proof_sample
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.languages.python.recipes import (
    MANIFESTS,
    declared_pythons,
    python_images,
    python_recipes,
)
from swe_forge_dagster.languages.registry import DEFAULT_PACK, is_test_path, proof_file
from swe_forge_dagster.tasks.build import swebench_version
from tests.support.common import SHARED_FIXTURES

IMAGES = {"3.11": "img:bookworm", "3.9": "img:bullseye", "3.13": "img:trixie"}
OLD_SETUP = """
EXTRAS_REQUIRE = {"tests": ["pytest", "pytz"], "lint": ["flake8"]}
EXTRAS_REQUIRE["dev"] = EXTRAS_REQUIRE["tests"] + ["tox"]
setup(name="m", extras_require=EXTRAS_REQUIRE, python_requires=">=3.5",
      classifiers=["Programming Language :: Python :: 3.6"])
"""
TOX = "[tox]\nenvlist = lint,py35,py36,py37\n\n[testenv]\nextras = tests,reco\ncommands = pytest {posargs}\n"


def test_an_old_project_gets_the_nearest_python_and_its_own_test_extras() -> None:
    manifests = {"setup.py": OLD_SETUP, "tox.ini": TOX}
    assert declared_pythons(manifests)[0] == [(3, 5), (3, 6), (3, 7)]
    assert python_images(manifests, IMAGES) == ["img:bullseye", "img:bookworm", "img:trixie"]
    installs = [r.install_commands[-1] for r in python_recipes(manifests, set(), "img:bullseye")]
    assert installs == [
        "pip install --config-settings editable_mode=compat -e '.[tests,reco]' pytest",
        "pip install --config-settings editable_mode=compat -e '.[tests]' pytest",
        "pip install --config-settings editable_mode=compat -e . pytest",
    ]
    assert all(
        r.install_commands[0].startswith("python3 -m venv /opt/venv") for r in python_recipes(manifests, set(), "x")
    )


def test_requires_python_filters_and_a_new_project_gets_a_new_python() -> None:
    pyproject = (
        '[project]\nname = "n"\nrequires-python = ">=3.10"\nclassifiers = ["Programming Language :: Python :: 3.13"]\n'
        '[project.optional-dependencies]\ntesting = ["pytest"]\n'
    )
    manifests = {"pyproject.toml": pyproject}
    assert python_images(manifests, IMAGES) == ["img:trixie", "img:bookworm"]  # 3.9 excluded by requires-python
    installs = [r.install_commands[-1] for r in python_recipes(manifests, {"requirements-dev.txt"}, "img:trixie")]
    assert installs == [
        "pip install --config-settings editable_mode=compat -e '.[testing]' pytest",
        "pip install -r requirements-dev.txt --config-settings editable_mode=compat -e . pytest",
        "pip install --config-settings editable_mode=compat -e . pytest",
    ]


def test_nothing_declared_keeps_the_default_order_and_a_non_python_repo_has_no_recipe() -> None:
    assert python_images({"setup.py": "setup(name='x')"}, IMAGES) == ["img:bookworm", "img:bullseye", "img:trixie"]
    assert python_recipes({"package.json": "{}"}, set(), "img") == []


def test_the_version_is_swebenchs_for_real_instances(tmp_path: Path) -> None:
    """SWE-bench's `version` of marshmallow-1359 / -1343 (3.0 / 2.20) from the real repository's release tags."""
    bundle = SHARED_FIXTURES / "repos" / "marshmallow-code+marshmallow.bundle"
    lite = SHARED_FIXTURES / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
    if not bundle.is_file() or not lite.is_file():
        pytest.skip("real fixtures missing (marshmallow bundle, SWE-bench Lite dev)")
    remote = tmp_path / "marshmallow-code" / "marshmallow.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(remote)], check=True)
    cache = RepoCache(tmp_path / "cache", f"file://{tmp_path}/{{repo}}.git")
    instances = [i for i in read_instances(lite) if i.repo == "marshmallow-code/marshmallow"]
    assert len(instances) == 2
    for inst in instances:
        cache.fetch(inst.repo, [inst.base_commit])
        assert swebench_version(cache.release_version(inst.repo, inst.base_commit)) == inst.version
    assert swebench_version("3.0.0rc3") == "3.0" and swebench_version(None) == "0.0"


def test_pep735_groups_named_by_tox_toml_come_first_on_real_filelock(tmp_path: Path) -> None:
    """tox-dev/filelock (hatch-vcs) keeps its test dependencies in `[dependency-groups] test`, which its tox.toml
    installs (`dependency_groups = ["test"]`): the first recipe installs that group, as the project's CI does."""
    bundle = SHARED_FIXTURES / "repos" / "tox-dev+filelock.bundle"
    if not bundle.is_file():
        pytest.skip("real fixture missing (filelock bundle)")
    remote = tmp_path / "tox-dev" / "filelock.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(remote)], check=True)
    base = subprocess.run(
        ["git", "-C", str(remote), "rev-parse", "721b37b^"], capture_output=True, text=True, check=True
    ).stdout.strip()
    cache = RepoCache(tmp_path / "cache", f"file://{tmp_path}/{{repo}}.git")
    cache.fetch("tox-dev/filelock", [base])
    manifests = {name: (cache.show_file("tox-dev/filelock", base, name) or b"").decode() for name in MANIFESTS}
    installs = [r.install_commands[-1] for r in python_recipes(manifests, set(), "img")]
    assert installs[0] == "pip install --config-settings editable_mode=compat -e . --group test pytest"
    assert python_images(manifests, IMAGES)[0] == "img:trixie"  # requires-python >=3.10, classifiers up to 3.14
    assert "tests/test_read_write_unit.py" in cache.list_files("tox-dev/filelock", base)


def test_a_proof_sample_runs_the_prs_own_test_modules_first_and_spreads_the_rest() -> None:
    files = [f"pkg/m{i}.py" for i in range(5)] + [f"tests/a/test_{i:02d}.py" for i in range(40)] + ["tests/helper.py"]
    preferred = ["tests/a/test_39.py", "tests/gone/test_x.py", "pkg/m1.py"]
    sample = proof_sample(files, preferred, limit=5, runs=proof_file(DEFAULT_PACK), is_test=is_test_path)
    assert "tests/a/test_39.py" in sample and len(sample) == 5
    assert all(path.startswith("tests/a/test_") for path in sample)
    assert sample == sorted(sample) and "tests/a/test_00.py" in sample  # spread from the start of the list


def test_what_an_older_code_made_is_not_taken_for_this_codes(tmp_path: Path) -> None:
    """Artifacts outlive the code that made them. A remembered recipe this code no longer makes for the commit
    (pylint-7080's, remembered before `editable_mode=compat`) is not put first, while one it still makes is; and
    an environment image's tag names the build procedure, so one built by another procedure is never reused."""
    from swe_forge_dagster.environments.candidates import environment_candidates
    from swe_forge_dagster.environments.environment import build_procedure, env_image_tag
    from swe_forge_dagster.execution.manifest import remember

    bundle = SHARED_FIXTURES / "repos" / "tox-dev+filelock.bundle"
    if not bundle.is_file():
        pytest.skip("real fixture missing (filelock bundle)")
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(bundle), str(tmp_path / "tox-dev" / "filelock.git")], check=True
    )
    cache = RepoCache(tmp_path / "cache", f"file://{tmp_path}/{{repo}}.git")
    repo, sha = "tox-dev/filelock", cache.resolve("tox-dev/filelock", "721b37b^")
    fresh = environment_candidates(cache, repo, sha, available=lambda image: True).recipes
    stale = dataclasses.replace(fresh[0], install_commands=("pip install -e . pytest",))
    remember(cache, repo, sha, stale)
    assert environment_candidates(cache, repo, sha, available=lambda image: True).recipes == fresh
    remember(cache, repo, sha, fresh[1])
    assert environment_candidates(cache, repo, sha, available=lambda image: True).recipes[0] == fresh[1]
    assert env_image_tag(repo, fresh[0]) == env_image_tag(repo, fresh[0], build_procedure())
    assert env_image_tag(repo, fresh[0]) != env_image_tag(repo, fresh[0], "another procedure")
