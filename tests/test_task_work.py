"""The task stages' bookkeeping without Docker: task ids, stage files, rejections, the sensor's selection,
the recipe store and the `tasks` rows, on real files, Parquet and DuckDB."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from swe_forge_dagster.candidates.datasets import partition_file
from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.tasks.lookup import PRNotFound, eligible_task_ids, find_pr
from swe_forge_dagster.tasks.recipes import RecipeStore
from swe_forge_dagster.tasks.status import status_row, write_status
from swe_forge_dagster.tasks.work import StageMissing, TaskWork, split_task_id, task_id_of
from swe_forge_dagster.triage.pipeline import CLASSIFIED_PRS, CLASSIFIED_PRS_SCHEMA
from swe_forge_dagster.wiring.catalog import query


def test_task_ids_round_trip_and_refuse_unsafe_names() -> None:
    assert task_id_of("acme-labs/tiny.calc_x", 12) == "acme-labs__tiny.calc_x-12"
    assert split_task_id("acme-labs__tiny.calc_x-12") == ("acme-labs/tiny.calc_x", 12)
    assert split_task_id("o__name-with-dashes-7") == ("o/name-with-dashes", 7)
    for bad in ("../etc-1", "owner__repo", "owner__repo-x", "owner-repo-1", "a__b/c-1"):
        with pytest.raises(ValueError):
            split_task_id(bad)
    with pytest.raises(ValueError):
        task_id_of("no-slash", 1)


def test_a_rejection_passes_on_and_rerunning_its_stage_clears_it(tmp_path: Path) -> None:
    work = TaskWork(tmp_path, "o__r-1")
    assert work.begin("patch") is None
    work.save("patch", {"patch": "x"})
    work.save("environment", {"image": "i"})
    work.reject("environment", "agent gave up")
    assert work.begin("tests") == {"stage": "environment", "reason": "agent gave up"}  # passed on downstream
    assert status_row(work)["status"] == "rejected"
    # Re-running the rejecting stage clears the rejection and its own (stale) output, keeps earlier ones.
    assert work.begin("environment") is None
    assert work.rejection() is None and not work.has("environment") and work.has("patch")
    with pytest.raises(StageMissing, match="environment"):
        work.load("environment")
    # An error is cleared by the next attempt of any stage at or before it.
    work.fail("environment", "docker down")
    assert status_row(work)["status"] == "error"
    work.begin("environment")
    assert work.error() is None and status_row(work)["status"] == "building"


def test_tasks_rows_are_one_per_task_and_replaced_after_each_stage(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    work = TaskWork(tmp_path / "work", "o__r-1")
    write_status(lake, work)
    work.save("pr", {"difficulty": "easy", "difficulty_score": 0.2})
    work.save("patch", {"base_commit": "abc", "statement_source": "issue"})
    work.reject("patch", "test_patch does not apply")
    write_status(lake, work)
    write_status(lake, TaskWork(tmp_path / "work", "o__r-2"))
    rows = query(lake, "SELECT task_id, status, stage, reason, difficulty FROM tasks ORDER BY task_id").to_pylist()
    assert rows == [
        {
            "task_id": "o__r-1",
            "status": "rejected",
            "stage": "patch",
            "reason": "test_patch does not apply",
            "difficulty": "easy",
        },
        {"task_id": "o__r-2", "status": "building", "stage": None, "reason": None, "difficulty": None},
    ]


def _classified(lake: Path, hour: str, rows: list[tuple[str, int, str, str]]) -> None:
    records = [{"repo_name": r, "number": n, "status": s, "difficulty": d} for r, n, s, d in rows]
    table = pa.Table.from_pylist(records, schema=CLASSIFIED_PRS_SCHEMA)
    write_partition(table, partition_file(lake, CLASSIFIED_PRS, hour).parent, CLASSIFIED_PRS_SCHEMA)


def test_sensor_selection_filters_by_difficulty_skips_existing_and_caps(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    assert eligible_task_ids(lake, ["easy"], set(), 10) == ([], 0)
    _classified(lake, "2024-01-01-01:00", [("b/z", 3, "classified", "easy"), ("a/y", 2, "classified", "hard")])
    _classified(
        lake,
        "2024-01-01-00:00",
        [("a/x", 1, "classified", "easy"), ("a/err", 9, "error", None), ("bad name/x", 4, "classified", "easy")],
    )
    assert eligible_task_ids(lake, ["easy"], set(), 10) == (["a__x-1", "b__z-3"], 0)  # oldest hour first
    assert eligible_task_ids(lake, [], set(), 10) == (["a__x-1", "a__y-2", "b__z-3"], 0)
    assert eligible_task_ids(lake, [], {"a__x-1"}, 1) == (["a__y-2"], 1)
    assert eligible_task_ids(lake, [], set(), 10, hours=["2024-01-01-01:00"]) == (["a__y-2", "b__z-3"], 0)


def test_find_pr_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(PRNotFound, match="o/r#5 is not an accepted PR"):
        find_pr(tmp_path / "lake", "o/r", 5)


def test_recipe_store_is_per_repo_and_per_base_image(tmp_path: Path) -> None:
    store = RecipeStore(tmp_path)
    recipe = EnvRecipe(("pip install -e .",), "python -m pytest {tests}", "img:1")
    assert store.get("o/r", "img:1") is None
    store.put("o/r", recipe, "abc")
    assert store.get("o/r", "img:1") == recipe
    assert store.get("o/r", "img:2") is None and store.get("o/other", "img:1") is None
    store.drop("o/r")
    assert store.get("o/r", "img:1") is None


def test_environment_images_go_stale_when_dependencies_change_not_on_a_version_bump(tmp_path: Path) -> None:
    import subprocess

    from swe_forge_dagster.environments.environment import Environments
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.execution.sandbox import SandboxConfig

    origin = tmp_path / "o" / "r.git"
    work = tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    shas = []
    for version, deps in (("0.1", '["attrs"]'), ("0.2", '["attrs"]'), ("0.2", '["attrs", "httpx"]')):
        (work / "pyproject.toml").write_text(f'[project]\nname = "r"\nversion = "{version}"\ndependencies = {deps}\n')
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", version], check=True)
        shas.append(
            subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
        )
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    cache = RepoCache(tmp_path / "cache", f"file://{tmp_path}/{{repo}}.git")
    cache.fetch("o/r", shas)
    environments = Environments(None, cache, SandboxConfig(image="unused"))  # type: ignore[arg-type]  # no engine needed
    first, bumped, added = (environments.dependency_fingerprint("o/r", sha) for sha in shas)
    assert first == bumped and bumped != added


def test_mine_follow_waits_for_a_late_hour_and_never_requests_an_unfinished_one() -> None:
    """`swe-forge mine` without --once: each hour after the newest, in order, once it is published."""
    import datetime as dt

    from swe_forge_dagster.gharchive.hours import partition_key
    from swe_forge_dagster.orchestration.mine import HourResult, MineOptions, Miner

    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    hours = [start + dt.timedelta(hours=i) for i in range(7)]
    published = {hours[1], hours[3], hours[4], hours[5]}  # hours[2] is late; hours[5] is not over at 5:30

    class Recording(Miner):  # the hourly jobs are not what is under test here: record what follow asks for
        def mine_hour(self, key: str) -> HourResult:
            self.asked.append(key)
            return HourResult(key, "mined")

    class Stop(Exception):
        pass

    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 1:
            published.add(hours[2])  # the late hour appears
        elif len(sleeps) == 3:
            raise Stop

    miner = Recording(None, None, None, lambda hour: hour in published, MineOptions(poll_seconds=7))  # type: ignore[arg-type]
    miner.asked = []
    with pytest.raises(Stop):
        miner.follow(partition_key(hours[0]), sleep=sleep, clock=lambda: hours[5] + dt.timedelta(minutes=30))
    assert miner.asked == [partition_key(h) for h in hours[1:5]]  # 1, then (after waiting) 2, 3, 4; never 5
    assert sleeps == [7, 7, 7]
