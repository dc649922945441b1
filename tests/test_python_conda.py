"""Test dependencies declared only in a repository's conda environment files (xarray's `ci/requirements/*.yml`):
found from the files, mapped to PyPI, installed one by one and kept only when they import."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from swe_forge_dagster.languages.python.conda import candidate_files, conda_dependencies, optional_installs
from swe_forge_dagster.languages.python.era import era_recipe
from swe_forge_dagster.languages.python.pack import PACK
from swe_forge_dagster.languages.python.recipes import python_recipes

# xarray's own files at pydata/xarray@e56905889c (SWE-bench Lite's pydata__xarray-5131), cut to a few entries each
ENVIRONMENT = """name: xarray-tests
channels:
  - conda-forge
  - nodefaults
dependencies:
  - bottleneck
  - cftime
  - dask
  - hdf5
  - iris
  - matplotlib-base
  - netcdf4
  - pip=20.2
  - pytest
  - scipy
  - zarr
  - pip:
    - numbagg
"""
WINDOWS = """name: xarray-tests
channels:
  - conda-forge
dependencies:
  - cftime
  - dask
  - pytest
"""
MIN_ALL_DEPS = """name: xarray-tests
channels:
  - conda-forge
dependencies:
  - python=3.7
  - bottleneck=1.2
  - cftime=1.0
  - dask=2.9
  - distributed=2.9
  - h5netcdf=0.7
  - iris=2.2
  - lxml=4.4
  - matplotlib-base=3.1
  - netcdf4=1.4
  - numpy=1.15
  - pandas=0.25
  - pytest
  - scipy=1.3
  - zarr=2.3
"""
TREE = {
    "setup.py",
    "setup.cfg",
    "ci/requirements/environment.yml",
    "ci/requirements/environment-windows.yml",
    "ci/requirements/py37-min-all-deps.yml",
    "ci/requirements/doc.yml",
    ".github/workflows/ci.yaml",
    "doc/environment.yml",
    "a/b/c/d/deep.yml",
    "xarray/__init__.py",
}
SETUP_CFG = "[metadata]\nname = xarray\n\n[options]\ninstall_requires =\n    numpy\n    pandas\n"


def test_the_tests_environment_file_is_chosen_by_its_content_and_named_as_pypi_names() -> None:
    assert candidate_files(TREE) == [
        "ci/requirements/doc.yml",
        "ci/requirements/environment-windows.yml",
        "ci/requirements/environment.yml",
        "ci/requirements/py37-min-all-deps.yml",
    ]
    files = {
        "ci/requirements/environment.yml": ENVIRONMENT,
        "ci/requirements/environment-windows.yml": WINDOWS,
        "ci/requirements/py37-min-all-deps.yml": MIN_ALL_DEPS,  # every dependency pinned to its oldest version
        "ci/requirements/doc.yml": "name: doc\ndependencies: [sphinx, ipython]\n",
        ".github/workflows/ci.yaml": "on: push\njobs: {}\n",
        "broken.yml": "dependencies: [unclosed\n",
        "dated.yml": "when: 2020-13-45\n",  # PyYAML raises ValueError for an impossible date
        "deep.yml": "[" * 5000,
    }
    assert conda_dependencies(files) == (
        "ci/requirements/environment.yml",
        [
            "bottleneck",
            "cftime",
            "dask",
            "scitools-iris",  # conda-forge's `iris` is PyPI's `scitools-iris` (PyPI's `iris` is another project)
            "matplotlib",  # `matplotlib-base`
            "netcdf4",
            "pytest",
            "scipy",
            "zarr",
            "numbagg",  # from the file's `pip:` list
        ],  # hdf5 (a C library) and pip are left out
    )
    assert conda_dependencies({"setup.cfg": SETUP_CFG, "a.yml": "key: value\n"}) is None


def test_the_recipes_install_them_after_the_project_and_only_where_a_conda_file_is() -> None:
    plain = python_recipes({"setup.cfg": SETUP_CFG, "setup.py": "from setuptools import setup\nsetup()\n"}, TREE, "x")
    manifests = {
        "setup.cfg": SETUP_CFG,
        "setup.py": "from setuptools import setup\nsetup()\n",
        "ci/requirements/environment.yml": ENVIRONMENT,
    }
    with_conda = python_recipes(manifests, TREE, "x")
    install = with_conda[0].install_commands[-1]
    assert install.startswith(plain[0].install_commands[-1] + " && ( for p in bottleneck cftime dask scitools-iris")
    assert "numbagg; do" in install
    assert PACK.files_to_read(TREE)[-4:] == tuple(candidate_files(TREE))  # the pack reads them from the tree
    era = era_recipe(with_conda[0], "3.9", manifests, datetime(2021, 4, 8, tzinfo=UTC)).install_commands[-1]
    assert "pip install" not in era and era.count("sh /.swe-forge-env/era-uv") == 2  # both as of the date


def _wheel(folder: Path, name: str, module: str) -> None:
    """A minimal pure-Python wheel of `name` whose package runs `module` at import."""
    dist = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": module,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/top_level.txt": f"{name}\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def test_each_is_kept_only_when_it_installs_and_imports_and_the_install_never_fails(tmp_path: Path) -> None:
    """In a real virtual environment, from a local wheel folder: one that imports is kept; one whose import raises
    (cfgrib without its C library) is uninstalled again; one that does not exist is left out; the line succeeds."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "goodpkg", "VALUE = 1\n")
    _wheel(wheels, "brokenpkg", "raise RuntimeError('ecCodes library not found')\n")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    env = {
        "PATH": f"{tmp_path / 'venv' / 'bin'}:/usr/bin:/bin",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    line = optional_installs(["goodpkg", "brokenpkg", "missingpkg"])
    done = subprocess.run(["bash", "-c", f"true && {line} && echo END"], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.splitlines() == [
        "test dependency goodpkg: installed",
        "test dependency brokenpkg: left out",
        "test dependency missingpkg: left out",
        "END",
    ], done
    listed = subprocess.run(["python", "-m", "pip", "list"], env=env, capture_output=True, text=True).stdout
    assert "goodpkg" in listed and "brokenpkg" not in listed
