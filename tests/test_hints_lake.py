"""`hints_text` from GitHub to the task record, through the lake, and lake hours written before it existed.

The task world's tinycalc#12 closes issue #11, which has two comments before the PR's first commit
and one after: the enrichment (real `enrich_hour` against the GitHub twin) stores all three and
the first commit's date in `enriched_prs`; `find_pr` cuts them into `hints_text`; the task record
carries exactly the two earlier ones, as SWE-bench's own collector computes them from the twin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from swe_forge_dagster.candidates.datasets import (
    ENRICHED_PRS,
    ENRICHED_PRS_SCHEMA,
    PR_CANDIDATES,
    PR_CANDIDATES_SCHEMA,
    partition_file,
)
from swe_forge_dagster.candidates.filters import FilterConfig
from swe_forge_dagster.candidates.ledger import Ledger
from swe_forge_dagster.candidates.pipeline import enrich_hour
from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.worlds.git_world import WorldPR, enriched_pr_rows
from swe_forge_dagster.demo.worlds.task_world import TaskWorld, build_task_world
from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.export.task_dir import read_task_dir, write_task_dir
from swe_forge_dagster.github.client import GitHubClient
from swe_forge_dagster.github.enrich import Enricher
from swe_forge_dagster.github.store import GithubStore
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.tasks.build import Proof, make_task_record
from swe_forge_dagster.tasks.lookup import HOURLY_GLOB, find_pr
from swe_forge_dagster.tasks.stages import _pr_from, _pr_json
from swe_forge_dagster.wiring.catalog import refresh_catalog
from tests.support.swebench_collector import swebench_hints

TOKEN = "ghp_hints_lake_token_0123456789"
TINYCALC = ("acme-labs/tinycalc", 12)


@dataclass
class Setup:
    world: TaskWorld
    twin: GithubTwin


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    world = build_task_world(tmp_path_factory.mktemp("hints-world"), noise_events=5)
    with GithubTwin(world.github, token=TOKEN) as twin:
        yield Setup(world, twin)


def expected_hints(pr: WorldPR) -> str:
    assert pr.issue is not None
    return "\n".join(c.body for c in pr.issue.comments if c.hours < 0)


def candidate_rows(prs: list[WorldPR]) -> pa.Table:
    rows = []
    for i, pr in enumerate(prs):
        row: dict[str, Any] = dict.fromkeys(PR_CANDIDATES_SCHEMA.names)
        row.update(
            repo_name=pr.repo,
            number=pr.number,
            event_id=9000 + i,
            actor_login="world-dev",
            org_login=pr.repo.split("/")[0],
            author_login="world-dev",
            payload_format="trimmed",
            base_sha=pr.base_sha,
            head_sha=pr.head_sha,
            status="candidate",
        )
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=PR_CANDIDATES_SCHEMA)


def test_task_record_hints_are_the_issue_comments_before_the_first_commit(setup: Setup, tmp_path: Path) -> None:
    lake, hour = tmp_path / "lake", setup.world.hours[0]
    prs = setup.world.prs_in(0)  # tinycalc#12 and yaml-lite#3
    write_partition(candidate_rows(prs), partition_file(lake, PR_CANDIDATES, hour).parent, PR_CANDIDATES_SCHEMA)
    store = GithubStore(tmp_path / "github.sqlite")
    with GitHubClient(setup.twin.url, TOKEN, store=store) as client:
        report = enrich_hour(lake, hour, Enricher(client, store), FilterConfig(), Ledger(tmp_path / "ledger.jsonl"))
    assert report.accepted == 2 and report.requests == 1

    world_pr = setup.world.git.pr(*TINYCALC)
    pr, _ = find_pr(lake, *TINYCALC)
    hints = expected_hints(world_pr)
    assert pr.hints_text == hints and hints.count("\n") == 1 and "Fixed by #12" not in hints
    assert pr.hints_text == swebench_hints(setup.twin.url, TOKEN, *TINYCALC, [11])
    assert find_pr(lake, "globex-oss/yaml-lite", 3)[0].hints_text == ""  # closes no issue

    assert _pr_from(json.loads(json.dumps(_pr_json(pr)))) == pr  # the task stages' saved PR keeps it
    proof = Proof(
        base_commit=pr.base_sha,
        patch="diff --git a/x b/x\n",
        test_patch="diff --git a/t b/t\n",
        test_files=["tests/test_rounding.py"],
        fail_to_pass=["tests/test_rounding.py::test_negative_half"],
        pass_to_pass=[],
        fail_to_pass_commands=["pytest tests/test_rounding.py::test_negative_half"],
        pass_to_pass_commands=[],
    )
    record = make_task_record(pr, proof, EnvRecipe((), PYTEST), "round_half_up(-2.5) returns -2")
    assert record.instance.hints_text == hints
    assert read_task_dir(write_task_dir(tmp_path / "out", record)).instance.hints_text == hints


def old_schema() -> pa.Schema:
    """`enriched_prs` as written before hints: no `first_commit_at`, issues without `comments`."""
    issue = ENRICHED_PRS_SCHEMA.field("closing_issues").type.value_type
    old_issue = pa.struct([f for f in issue if f.name != "comments"])
    fields = [f for f in ENRICHED_PRS_SCHEMA if f.name != "first_commit_at"]
    return pa.schema([pa.field(f.name, pa.list_(old_issue)) if f.name == "closing_issues" else f for f in fields])


@pytest.mark.parametrize("old_hour_first", [True, False])
def test_hours_written_before_the_hint_columns_still_read(setup: Setup, tmp_path: Path, old_hour_first: bool) -> None:
    lake = tmp_path / "lake"
    rows = {(r["repo_name"], r["number"]): r for r in enriched_pr_rows(setup.world.git)}
    new_row = rows[TINYCALC]
    old_rows = [dict(rows[("northwind/datekit", 7)]), dict(rows[("acme-labs/tinycalc", 15)])]
    # an old row with an issue (as rows were written then: no comments), and one without
    old_rows[1]["closing_issues"] = [{k: v for k, v in i.items() if k != "comments"} for i in new_row["closing_issues"]]
    for row in old_rows:
        row.pop("first_commit_at")
    hours = ["2024-03-01-10:00", "2024-03-01-11:00"]
    old_hour, new_hour = hours if old_hour_first else hours[::-1]
    old_table = pa.Table.from_pylist(old_rows, schema=old_schema())
    write_partition(old_table, partition_file(lake, ENRICHED_PRS, old_hour).parent, old_schema())
    new_table = pa.Table.from_pylist([new_row], schema=ENRICHED_PRS_SCHEMA)
    write_partition(new_table, partition_file(lake, ENRICHED_PRS, new_hour).parent, ENRICHED_PRS_SCHEMA)
    with pytest.raises(pl.exceptions.PolarsError):  # why find_pr names the schema: the naive scan breaks
        pl.scan_parquet(str(lake / ENRICHED_PRS / HOURLY_GLOB), hive_partitioning=True).collect()

    assert find_pr(lake, *TINYCALC)[0].hints_text == expected_hints(setup.world.git.pr(*TINYCALC))
    datekit, _ = find_pr(lake, "northwind/datekit", 7)
    assert (datekit.hints_text, datekit.head_sha) == ("", old_rows[0]["head_sha"])
    old_with_issue, _ = find_pr(lake, "acme-labs/tinycalc", 15)
    assert old_with_issue.hints_text == "" and old_with_issue.closing_issues[0]["number"] == 11  # no cut-off known

    catalog = tmp_path / "catalog.duckdb"
    refresh_catalog(catalog, lake)
    with duckdb.connect(str(catalog), read_only=True) as con:
        got = con.sql(
            "SELECT repo_name, number, first_commit_at IS NOT NULL, "
            "len(flatten(list_transform(closing_issues, lambda i: coalesce(i.comments, [])))) "
            "FROM enriched_prs ORDER BY repo_name, number"
        ).fetchall()
    assert got == [
        ("acme-labs/tinycalc", 12, True, 3),
        ("acme-labs/tinycalc", 15, False, 0),
        ("northwind/datekit", 7, False, 0),
    ]
