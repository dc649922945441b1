"""Compiled Python repositories (`languages.python.extensions`): the install that builds C, Cython or Fortran code
gets the build tools first, decided from the files (sources a compiler reads, a build that compiles them), and an era
recipe keeps that step. Fast: the recipes are derived, not built (`benchmarks/env_corpus.py` builds real ones)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

from swe_forge_dagster.languages.python.era import era_recipe
from swe_forge_dagster.languages.python.extensions import BUILD_TOOLS, build_requirements, compiles
from swe_forge_dagster.languages.python.pack import PACK
from swe_forge_dagster.languages.python.recipes import python_recipes

CYTHON_SETUP = (
    "from setuptools import setup\nfrom Cython.Build import cythonize\nsetup(ext_modules=cythonize('*.pyx'))\n"
)
NUMPY_DISTUTILS = "def configuration(parent_package='', top_path=None):\n    pass\n"
MESON = '[build-system]\nrequires = ["meson-python", "Cython>=0.29"]\nbuild-backend = "mesonpy"\n'
PURE = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'


def test_a_build_that_compiles_its_sources_is_told_from_the_files() -> None:
    # sklearn 0.2x (numpy.distutils), a cythonized package, a meson-python one (pandas 2, sklearn 1.5), astropy
    assert compiles({"setup.py": NUMPY_DISTUTILS}, {"setup.py", "sklearn/tree/_tree.pyx"})
    assert compiles({"setup.py": CYTHON_SETUP}, {"setup.py", "pkg/fast.pyx"})
    assert compiles({"pyproject.toml": MESON}, {"pyproject.toml", "pandas/_libs/lib.pyx", "meson.build"})
    astropy = "from extension_helpers import get_extensions\nsetup(ext_modules=get_extensions())\n"
    assert compiles({"setup.py": astropy}, {"setup.py", "cextern/wcslib/C/wcs.c"})
    # sources only in tests or docs, or a build that compiles nothing: no compiler
    assert not compiles({"setup.py": CYTHON_SETUP}, {"setup.py", "tests/data/sample.c", "docs/ext/demo.c"})
    assert not compiles({"pyproject.toml": PURE}, {"pyproject.toml", "pkg/vendored.c"})
    assert not compiles({"setup.py": "setup(name='x')\n"}, {"setup.py", "pkg/__init__.py"})
    assert not compiles({"pyproject.toml": "not [ toml"}, {"pyproject.toml", "pkg/fast.pyx"})


def test_the_build_tools_come_first_and_survive_the_era_recipe() -> None:
    manifests = {"setup.py": CYTHON_SETUP}
    compiled = python_recipes(manifests, {"setup.py", "pkg/fast.pyx"}, "swe-forge-base:bullseye")
    assert compiled and all(r.install_commands[0] == BUILD_TOOLS for r in compiled)
    era = era_recipe(compiled[0], "3.9", manifests, datetime(2019, 6, 1, tzinfo=UTC))
    assert era.install_commands[0] == BUILD_TOOLS and "uv" in era.install_commands[1]
    pure = python_recipes({"setup.py": "setup(name='x')\n"}, {"setup.py"}, "swe-forge-base:bullseye")
    assert all(BUILD_TOOLS not in r.install_commands for r in pure)


def test_joined_into_one_line_a_failed_step_before_it_is_not_masked() -> None:
    # an exported task runs the steps joined with `&&`: the build-tools step must not turn a failure into success
    step = BUILD_TOOLS.replace("apt-get", "echo apt-get")
    failed = subprocess.run(["sh", "-c", f"false && {step} && echo reached"], capture_output=True, text=True)
    assert failed.returncode == 1 and "reached" not in failed.stdout, failed.stderr
    went_on = subprocess.run(["sh", "-c", f"true && {step} && echo reached"], capture_output=True, text=True)
    assert went_on.returncode == 0 and "reached" in went_on.stdout, went_on.stderr


def test_a_compiled_setup_py_with_no_build_system_gets_its_build_requirements_first_and_no_isolation() -> None:
    # scikit-learn 0.2x: numpy.distutils in setup.py, .pyx sources, no pyproject.toml (SWE-bench installs numpy,
    # scipy and cython, then `pip install --no-build-isolation -e .`)
    sklearn = {"setup.py": "from numpy.distutils.core import setup\n" + NUMPY_DISTUTILS}
    tree = {"setup.py", "sklearn/tree/_tree.pyx", "sklearn/tree/tests/test_tree.py"}
    assert build_requirements(sklearn, tree) == ["setuptools", "wheel", "numpy", "cython"]
    assert build_requirements({"pyproject.toml": MESON}, {"pyproject.toml", "pkg/a.pyx"}) is None  # isolated build
    assert build_requirements({"setup.py": "setup(name='x')\n"}, {"setup.py"}) is None  # nothing compiled
    (era,) = PACK.era_recipes(sklearn, tree, "swe-forge-base:bullseye", datetime(2019, 6, 1, tzinfo=UTC))
    prepare, install = era.install_commands[-1].split(" && ", 1)
    assert "numpy cython" in prepare and "--no-build-isolation" in install
    today, _ = PACK.recipes(sklearn, tree, "swe-forge-base:bullseye")
    assert all("--no-build-isolation" in r.install_commands[-1] for r in today)


def test_astropy_helpers_builds_and_test_data_sources_are_told_apart() -> None:
    helpers = "from astropy_helpers.setup_helpers import get_package_info\nsetup(**get_package_info())\n"
    assert compiles({"setup.py": helpers}, {"setup.py", "astropy/wcs/src/wcslib_wrap.c"})
    for data in ("pkg/tests/data/a.c", "pkg/test_data/a.c", "pkg/testdata/a.c", "pkg/_tests/a.c"):
        assert not compiles({"setup.py": CYTHON_SETUP}, {"setup.py", data}), data
