"""With autoloading off, pytest loads the plugins the environment installed, by their entry-point names, and none
that the checkout names (`languages.python.runner`: `ENVIRONMENT_PLUGINS`, `PLUGIN_LOADER`, the pytest runner's
`plugins_off` line). Fast: a real virtual environment in a temporary folder that holds the metadata of syrupy,
pytest-timeout and anyio (their code and pytest's reached through a `.pth` line to this project's environment), real
package metadata in the checkout, the line run by sh before a real pytest run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from swe_forge_dagster.languages.python.runner import NO_AUTOLOAD

CHECKS = """
def test_plugins(request):
    manager = request.config.pluginmanager
    assert manager.has_plugin("syrupy") and manager.has_plugin("anyio")  # by their entry-point names
    assert not manager.has_plugin("timeout")  # the configuration's `-p no:timeout` still blocks it
    assert not manager.has_plugin("evil") and not manager.has_plugin("tinycalc.evil")
"""


def test_the_environments_plugins_load_by_name_and_the_checkouts_do_not(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    info = repo / "evil-1.0.dist-info"  # metadata an agent's diff writes into the checkout (on pytest's path)
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nevil = tinycalc.evil\n")
    (repo / "tinycalc").mkdir()
    (repo / "tinycalc" / "__init__.py").write_text("")
    (repo / "tinycalc" / "evil.py").write_text("raise SystemExit('the planted plugin was imported')\n")
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -p no:timeout -p no:cacheprovider\n")
    (repo / "test_plugins.py").write_text(CHECKS)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    (ours,) = {Path(p) for p in sys.path if p.endswith("site-packages") and (Path(p) / "syrupy").is_dir()}
    (site / "project.pth").write_text(f"{ours}\n")
    for dist in ("syrupy", "pytest_timeout", "anyio"):
        (info,) = ours.glob(f"{dist}-*.dist-info")
        shutil.copytree(info, site / info.name)  # installed in this environment, as far as metadata says
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    # `-p anyio` on the command line, as a suite that names its plugin does: found loaded, not registered twice
    line = NO_AUTOLOAD + "python -m pytest -q -p anyio test_plugins.py\n"
    done = subprocess.run(["/bin/sh", "-c", line], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_where_there_is_no_python_nothing_is_named_and_autoloading_stays_off(tmp_path: Path) -> None:
    line = NO_AUTOLOAD + 'printf "%s|%s" "$PYTEST_DISABLE_PLUGIN_AUTOLOAD" "${PYTEST_PLUGINS-unset}"\n'
    done = subprocess.run(["/bin/sh", "-c", line], env={"PATH": str(tmp_path)}, capture_output=True, text=True)
    assert done.stdout == "1|unset", done.stdout + done.stderr
