"""The wheel is complete: installed from it (not from the checkout), the package finds its reference
agents (`examples/` travels as `swe_forge_dagster/_examples`) and its Dagster instance template."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.common import REPO_ROOT


def _uv() -> str:
    found = shutil.which("uv") or str(REPO_ROOT / ".uv-tool" / "bin" / "uv")
    if not Path(found).is_file():
        pytest.skip("uv not found (scripts/bootstrap installs it into .uv-tool/)")
    return found


def test_an_installed_wheel_finds_its_examples_and_instance_template(tmp_path: Path) -> None:
    uv = _uv()
    subprocess.run(
        [uv, "build", "--wheel", "-q", "-o", str(tmp_path / "dist"), str(REPO_ROOT)], check=True, timeout=300
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    subprocess.run([uv, "venv", "-q", str(tmp_path / "venv")], check=True, timeout=120)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", "--python", str(python), str(wheel)], check=True, timeout=300
    )
    probe = (
        "from swe_forge_dagster.common.examples import examples_dir; from pathlib import Path; import "
        "swe_forge_dagster; d = examples_dir(); print(d); print((d / 'emptyagent/emptyagent/__main__.py').is_file()); "
        "print((Path(swe_forge_dagster.__file__).parent / 'orchestration/dagster_instance.yaml').is_file())"
    )
    # run outside the checkout, so the checkout's examples/ cannot be what is found
    out = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True, timeout=60
    ).stdout.split()
    assert out[0].startswith(str(tmp_path / "venv")) and out[0].endswith("_examples"), out
    assert out[1:] == ["True", "True"]


# Declared for what they run, not for an import of ours.
NOT_IMPORTED = {
    "dagster-webserver": "the Dagster UI",
    "dagster-dg-cli": "the `dg` command",
    "dagster-docker": "the run launcher deploy/dagster.yaml names by module",
}


def test_every_runtime_dependency_is_imported_by_the_package() -> None:
    """A dependency nobody imports (as junitparser and unidiff once were) is weight in every image: drop it,
    or move it to the dev group when only tests use it."""
    import ast
    import importlib.metadata
    import re
    import tomllib

    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[\s\[<>=;!~]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in declared}
    imported: set[str] = set()
    for path in (REPO_ROOT / "swe_forge_dagster").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    distributions = importlib.metadata.packages_distributions()
    used = {dist.lower().replace("_", "-").replace(".", "-") for top in imported for dist in distributions.get(top, [])}
    unused = {name for name in names if name.replace(".", "-") not in used} - set(NOT_IMPORTED)
    assert not unused, f"declared in [project].dependencies but never imported by swe_forge_dagster: {sorted(unused)}"
