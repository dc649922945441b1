"""Task repositories that travel (issue 39, item 1), without Docker.

`swe-forge export --format swebench-task-repo` of task directories run outside the home they were made in takes
the trees from that home's repository cache (before: it cloned from GitHub, exited 1 with "0 tasks" and still
printed the next step). The repository records the base commit's release tags beside its recipe, which our tools
reading it back give the carried tree (it has no history). An export with nothing to write fails with one line and
no next step. (`tests/test_task_repo.py` runs our harness, `validate` and a re-export on an exported repository in
a fresh home whose git URL reaches nothing.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.task_dir import write_task_dir
from tests.support.common import cli_json, run_cli
from tests.support.records import make_instance, make_task


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_tasks_exported_outside_their_home_take_its_trees_and_carry_their_release_tags(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "w.py").write_text("x = 1\n")
    git(work, "add", "w.py")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c1")
    git(work, "tag", "v2.4.1")
    sha = git(work, "rev-parse", "HEAD")
    git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "remotes" / "octo" / "widgets.git"))

    made = tmp_path / "made"  # the home the tasks were made in: its cache has the commit, read when it was proven
    cache = RepoCache(made / "cache" / "repos", f"file://{tmp_path}/remotes/{{repo}}.git")
    cache.fetch("octo/widgets", [sha])
    with cache.worktree("octo/widgets", sha):  # what proving it read: its files and its release tags
        assert cache.release_tags("octo/widgets", sha) == ("v2.4.1", "2.4.1")
    inst = make_instance(base_commit=sha, environment_setup_commit=sha)
    write_task_dir(made / "tasks", make_task(inst))
    (tmp_path / "remotes").rename(tmp_path / "gone")  # and the remote is gone

    out = tmp_path / "task-repo"
    export = ("export", "-i", str(made / "tasks"), "-o", str(out), "--format", "swebench-task-repo")
    summary = cli_json(tmp_path / "elsewhere", *export)  # another home, the default (GitHub) git URL
    assert summary["tasks"] == [inst.instance_id] and summary["skipped"] == {}, summary["skipped"]
    task_dir = out / "tasks" / inst.instance_id
    assert "x = 1" in subprocess.run(["tar", "-xOf", str(task_dir / "repo.tar")], capture_output=True, text=True).stdout
    meta = yaml.safe_load((task_dir / "task.yaml").read_text())
    assert meta["swe_forge_environment"]["release_tags"] == ["v2.4.1", "2.4.1"]


def test_an_export_with_nothing_to_write_fails_in_one_line_with_no_next_step(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")}, "SWE_FORGE_HOME": str(tmp_path)}
    args = ("export", "-i", str(tmp_path / "empty"), "-o", str(tmp_path / "out"), "--format", "swebench-task-repo")
    done = run_cli(*args, env=env, cwd=tmp_path)
    assert done.returncode == 1, done
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: nothing exported"), lines
