"""Era-true Python recipes without Docker (issue 22): the resolution date, the interpreter, old build backends,
the ladder's order and the record an install leaves for the image's labels."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import runtime_labels
from swe_forge_dagster.execution.era import RESOLUTION_VAR, is_era, is_old, resolution_of
from swe_forge_dagster.execution.recipe import ENV_DIR
from swe_forge_dagster.languages.python.era import (
    ERA_UV_SCRIPT,
    RECORD_SCRIPT,
    TODAY_FILE,
    WHEELS_FILE,
    legacy_build,
    resolution_date,
)
from swe_forge_dagster.languages.python.pack import PACK
from swe_forge_dagster.languages.python.recipes import BASE_IMAGES, declared_pythons, python_images
from tests.support.dated_repo import dated_repo

IMAGES = {"3.11": "img:bookworm", "3.9": "img:bullseye", "3.13": "img:trixie"}
FLASK_TOX = "[tox]\nenvlist =\n    py{39,38,37,36,py3}\n    py39-click7\n    style\n"
OLD = datetime(2021, 5, 13, 20, 35, 12, tzinfo=UTC)
OLDER = datetime(2021, 2, 1, tzinfo=UTC)


def test_the_date_is_the_commits_unless_it_predates_the_interpreter() -> None:
    assert resolution_date(OLD, "3.9") == "2021-05-13T20:35:12Z"  # flask-4045 on 3.9: the commit's own date
    assert resolution_date(OLD, "3.11") == "2022-10-24T00:00:00Z"  # 2021 packages predate Python 3.11
    assert resolution_date(datetime(2014, 10, 26, tzinfo=UTC), "3.9") == "2020-10-05T00:00:00Z"  # requests-2317
    assert resolution_date(datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), "3.13") == "2025-01-02T03:04:05Z"
    now = datetime(2026, 11, 26, tzinfo=UTC)
    assert is_old(OLD, now) and not is_old(now - timedelta(days=30), now) and not is_old(None, now)


def test_the_recipe_carries_its_date_and_survives_being_joined_into_one_line(tmp_path: Path) -> None:
    """The era recipe's steps, run by bash as the sandbox runs them and as an exported task's one `&&` line: the
    date is the recipe's own (clamped to the interpreter), so two commits' recipes (and images) differ."""
    for committed, python, expected in (
        (OLD, "3.9", "2021-05-13T20:35:12Z"),
        (datetime(2014, 10, 26, tzinfo=UTC), "3.9", "2020-10-05T00:00:00Z"),
        (OLD, "3.11", "2022-10-24T00:00:00Z"),
    ):
        image = BASE_IMAGES[python]
        (recipe,) = PACK.era_recipes({"setup.py": "setup()"}, set(), image, committed)
        steps = [c.replace(ENV_DIR, str(tmp_path)) for c in recipe.install_commands[1:2]]
        script = " && ".join([*steps, f"echo ${RESOLUTION_VAR}"])  # as export.task_dir joins an install
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == expected
        assert "pytest-version=" in (tmp_path / "record").read_text() and (tmp_path / "era-uv").is_file()
    dates = {PACK.era_recipes({"setup.py": "setup()"}, set(), BASE_IMAGES["3.9"], d)[0].key() for d in (OLD, OLDER)}
    assert len(dates) == 2  # two commits of different dates: two images


def test_an_old_commit_gets_an_era_recipe_first_and_todays_releases_after() -> None:
    manifests = {"setup.py": "setup(name='x', extras_require={'tests': ['pytest']})"}
    era = PACK.era_recipes(manifests, set(), "swe-forge-base:bullseye", OLD)
    assert len(era) == 1 and is_era(era[0])
    install = era[0].install_commands[-1]
    assert install.startswith(f"sh {ERA_UV_SCRIPT} --exclude-newer-package setuptools=2022-08-20T00:00:00Z ")
    assert (
        "wheel=2022-08-20T00:00:00Z" in install
        and "--compile-bytecode" in install
        and "--config-settings editable_mode=compat -e '.[tests]' pytest" in install
    )
    assert "pip install -q uv" in era[0].install_commands[0]
    assert PACK.era_recipes(manifests, set(), "swe-forge-base:bookworm", datetime.now(UTC)) == []  # young: today's
    today, _ = PACK.recipes(manifests, set(), "swe-forge-base:bullseye")
    assert (
        not any(is_era(r) for r in today)
        and today[0].install_commands[-1] == "pip install --config-settings editable_mode=compat -e '.[tests]' pytest"
    )


def test_the_ladder_on_a_dated_repository_offers_era_recipes_before_todays(tmp_path: Path) -> None:
    files = {"setup.py": "setup(name='x')\n", "tox.ini": FLASK_TOX, "tests/test_x.py": "def test_x(): pass\n"}
    cache, sha = dated_repo(tmp_path / "old", files, "2021-05-13T13:35:12-07:00")
    found = environment_candidates(cache, "o/r", sha, available=lambda image: image != BASE_IMAGES["3.13"])
    assert [(is_era(r), r.base_image) for r in found.recipes] == [
        (True, BASE_IMAGES["3.9"]),  # old code: the oldest Python it accepts first
        (True, BASE_IMAGES["3.11"]),
        (False, BASE_IMAGES["3.9"]),
        (False, BASE_IMAGES["3.11"]),
    ]
    assert cache.committed_at("o/r", sha) == datetime(2021, 5, 13, 20, 35, 12, tzinfo=UTC)
    cache, sha = dated_repo(tmp_path / "young", files, datetime.now(UTC).isoformat())
    found = environment_candidates(cache, "o/r", sha, available=lambda image: True)
    assert not any(is_era(r) for r in found.recipes)


def test_old_code_gets_the_oldest_python_it_accepts_and_new_code_todays() -> None:
    assert declared_pythons({"tox.ini": FLASK_TOX})[0] == [(3, 6), (3, 7), (3, 8), (3, 9)]
    assert python_images({"tox.ini": FLASK_TOX}, IMAGES) == ["img:bullseye", "img:bookworm", "img:trixie"]
    ten = {
        "setup.py": "setup(classifiers=["
        + ", ".join(f"'Programming Language :: Python :: 3.{m}'" for m in (8, 9, 10))
        + "])"
    }
    assert python_images(ten, IMAGES)[0] == "img:bullseye"  # declared up to 3.10: old code, was 3.11 first
    needs_310 = {**ten, "setup.cfg": "[options]\npython_requires = >=3.10\n"}
    assert python_images(needs_310, IMAGES)[0] == "img:bookworm"  # the oldest it accepts
    assert python_images({".python-version": "3.12.4\n"}, IMAGES)[0] == "img:trixie"  # nearest, then the newer
    assert python_images({".python-version": "3.13\n"}, IMAGES)[0] == "img:trixie"
    assert python_images({"setup.py": "setup()"}, IMAGES) == list(IMAGES.values())  # nothing declared: default
    assert python_images({".python-version": "3.10.4\n"}, IMAGES)[0] == "img:bookworm"  # never below its pin first
    assert declared_pythons({"tox.ini": "[tox]\nenvlist = py3{8,9,10,11,12}, lint\n"})[0][-1] == (3, 12)


def test_names_from_the_repository_reach_the_install_only_when_well_formed() -> None:
    tox = "[testenv]\nextras =\n    a';id;'\n    tests\n"
    groups = '[project]\nname = "p"\n[dependency-groups]\n"t;touch${IFS}/tmp/pwned;#" = ["x"]\ntest = ["y"]\n'
    today, _ = PACK.recipes({"setup.py": "setup()", "tox.ini": tox, "pyproject.toml": groups}, set(), "img")
    installs = [r.install_commands[-1] for r in today]
    assert installs[0] == "pip install --config-settings editable_mode=compat -e '.[tests]' --group test pytest"
    assert not any(";" in install or "$" in install for install in installs), installs


def test_a_setuptools_pinned_before_pep_660_is_built_without_isolation() -> None:
    pinned = '[build-system]\nrequires = ["setuptools~=62.6", "wheel", "setuptools_scm[toml]>=6.2"]\n'
    assert legacy_build(pinned) == ["setuptools", "wheel", "setuptools_scm[toml]>=6.2"]
    assert legacy_build('[build-system]\nrequires = ["setuptools<64"]\n') == ["setuptools", "wheel"]
    for fine in ("setuptools>=61", "setuptools", "setuptools==67.*", "setuptools~=68.0", "setuptools<69"):
        assert legacy_build(f'[build-system]\nrequires = ["{fine}"]\n') is None, fine
    for fine in ("", "[build-system]\n"):
        assert legacy_build(fine) is None
    manifests = {"pyproject.toml": pinned + '[project]\nname = "p"\nversion = "1"\n'}
    today, _ = PACK.recipes(manifests, set(), "img")
    assert today[-1].install_commands[-1] == (
        "pip install -q --upgrade setuptools wheel 'setuptools_scm[toml]>=6.2' "
        "&& pip install --no-build-isolation --config-settings editable_mode=compat -e . pytest"
    )
    era = PACK.era_recipes(manifests, set(), "img", OLD)[0].install_commands[-1]
    assert (
        "--upgrade setuptools wheel" in era
        and "--no-build-isolation --config-settings editable_mode=compat -e . pytest" in era
    )


def test_an_installs_record_becomes_image_labels() -> None:
    text = "python-version=3.9.2\npytest-version=6.2.4\nresolution-date=2021-05-13T20:35:12Z\nrung=manifest-era\n"
    assert runtime_labels(text + "Bad Name=x\nempty=\nnoise\n") == {
        "swe-forge.python-version": "3.9.2",
        "swe-forge.pytest-version": "6.2.4",
        "swe-forge.resolution-date": "2021-05-13T20:35:12Z",
        "swe-forge.rung": "manifest-era",
    }


def _era_script_with_stand_ins(tmp_path: Path, stand_ins: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The era recipe's install of a 2021 commit on Python 3.9, as one sh script writing into `tmp_path`, and an
    environment whose PATH finds the stand-in programs (`name` -> its sh body) first."""
    (recipe,) = PACK.era_recipes({"setup.py": "setup()"}, set(), BASE_IMAGES["3.9"], OLD)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in stand_ins.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}")
        (bin_dir / name).chmod(0o755)
    install = recipe.install_commands[2].split(f" && sh {RECORD_SCRIPT}")[0]
    script = f"{recipe.install_commands[1]} && {install}".replace(ENV_DIR, str(tmp_path))
    return script, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_package_with_no_release_before_the_date_is_taken_as_of_today(tmp_path: Path) -> None:
    """The era install's script, run by sh with a stand-in `uv` that answers as uv does for atomicwrites (its old
    releases deleted in 2022) and then for six: each named package is retried as of today, and recorded."""
    hint = "hint: `{0}` was filtered by `exclude-newer` to only include packages uploaded before {1}."
    uv = (
        f'echo "$@" >> {tmp_path}/calls\n'
        'case "$*" in *--dry-run*) exit 0;; *atomicwrites=false*six=false*) echo installed; exit 0;; '
        f"*atomicwrites=false*) echo '{hint.format('six', '2021')}'; exit 1;; "
        f"*) echo '{hint.format('atomicwrites', '2021')}'; exit 1;; esac\n"
    )
    script, env = _era_script_with_stand_ins(tmp_path, {"uv": uv})
    done = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "installed" in done.stdout, done.stdout + done.stderr
    calls = [c for c in (tmp_path / "calls").read_text().splitlines() if "--dry-run" not in c]  # the wheel probe's
    assert len(calls) == 3 and calls[0].startswith("pip install --exclude-newer 2021-05-13T20:35:12Z ")
    assert (tmp_path / TODAY_FILE.rsplit("/", 1)[1]).read_text().split() == ["atomicwrites", "six"]
    (tmp_path / "bin" / "uv").write_text("#!/bin/sh\necho 'error: no solution'; exit 1\n")
    failed = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert failed.returncode == 1 and "no solution" in failed.stdout  # another failure: reported, no retry


def test_a_compiled_package_with_no_wheel_for_the_interpreter_is_taken_from_its_first_release_with_one(
    tmp_path: Path,
) -> None:
    """The era script with a stand-in `uv` that answers as uv 0.13 does for numpy and scipy on Python 3.9 as of
    3.9's release day (wheels for 3.8, none for 3.9 until a month, then two months on), for docopt (no wheel ever) and
    for atomicwrites (no release before the date): numpy and scipy move to those dates and are recorded, atomicwrites
    is taken as of today; docopt, pure Python, stops the search and is never moved."""
    required = "hint: Wheels are required for `{0}` because building from source is disabled"
    filtered = "hint: `atomicwrites` was filtered by `exclude-newer` to only include packages uploaded before 2021"
    uv = (
        f'echo "$@" >> {tmp_path}/calls\n'
        'case "$*" in "pip compile"*) read name; [ "$name" != docopt ]; exit $?;; esac\n'
        'case "$*" in *--dry-run*) ;; *) echo installed; exit 0;; esac\n'
        f"case \"$*\" in *atomicwrites=false*) ;; *) echo '{filtered}'; exit 1;; esac\n"
        f"case \"$*\" in *numpy=2021-06-13*) ;; *) echo '{required.format('numpy')}'; exit 1;; esac\n"
        f"case \"$*\" in *scipy=2021-07-13*) ;; *) echo '{required.format('scipy')}'; exit 1;; esac\n"
        f"echo '{required.format('docopt')}'; exit 1\n"
    )
    script, env = _era_script_with_stand_ins(tmp_path, {"uv": uv, "python": "echo 3.8\n"})  # 3.8: before the venv's
    done = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "installed" in done.stdout, done.stdout + done.stderr
    moved = (tmp_path / WHEELS_FILE.rsplit("/", 1)[1]).read_text().split()
    assert moved == ["numpy=2021-06-13T00:00:00Z", "scipy=2021-07-13T00:00:00Z"]
    (final,) = [
        c for c in (tmp_path / "calls").read_text().splitlines() if "--dry-run" not in c and "pip compile" not in c
    ]
    assert "numpy=2021-06-13T00:00:00Z" in final and "scipy=2021-07-13T00:00:00Z" in final and "docopt" not in final
    assert "atomicwrites=false" in final  # no release before the date: taken as of today, and the search went on
    assert (tmp_path / TODAY_FILE.rsplit("/", 1)[1]).read_text().split() == ["atomicwrites"]


def test_an_era_recipe_on_a_runtime_of_the_commits_time_comes_before_one_on_a_newer_runtime(tmp_path: Path) -> None:
    """pytest-11148 (June 2023) declares Python up to 3.12: 3.13 is nearest, but it came out in October 2024, so its
    era recipe resolves as of then (pluggy 1.5, whose teardown warning fails pytest's own tests); 3.11 existed."""
    classifiers = ", ".join(f"'Programming Language :: Python :: 3.{m}'" for m in (8, 9, 10, 11, 12))
    files = {"setup.py": f"setup(classifiers=[{classifiers}])\n", "testing/test_x.py": "def test_x(): pass\n"}
    cache, sha = dated_repo(tmp_path, files, "2023-06-29T00:04:33+00:00")
    assert python_images(files, BASE_IMAGES)[0] == BASE_IMAGES["3.13"]  # nearest to what it declares
    found = environment_candidates(cache, "o/r", sha, available=lambda image: True)
    era = [(r.base_image, resolution_of(r)) for r in found.recipes if is_era(r)]
    assert era[0] == (BASE_IMAGES["3.11"], "2023-06-29T00:04:33Z")  # the commit's own date: its runtime existed
    assert (BASE_IMAGES["3.13"], "2024-10-07T00:00:00Z") in era[1:]  # clamped to 3.13's release: after
