"""Snapshot of the whole Dagster graph: every asset spec, asset check, job and sensor.

A change to the graph (a new dependency, a pool, a partitioning, a sensor's default state, a
check's blocking flag) shows up as a reviewable diff of `__snapshots__/`. When the change is
intended, refresh with `scripts/test tests/test_definitions_snapshot.py --snapshot-update`.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.settings import Settings


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def _partitions(partitions: dg.PartitionsDefinition | None) -> str | None:
    if partitions is None:
        return None
    if isinstance(partitions, dg.DynamicPartitionsDefinition):
        return f"dynamic:{partitions.name}"
    return str(partitions)


def graph_description(defs: dg.Definitions) -> dict[str, Any]:
    """Everything about the graph a reviewer cares about, as plain sorted data."""
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets_def = defs.resolve_assets_def(key)
        policy = assets_def.backfill_policy
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(parent.to_user_string() for parent in node.parent_keys),
            "partitions": _partitions(node.partitions_def),
            "pools": sorted(node.pools or ()),
            "op_tags": dict(sorted(assets_def.node_def.tags.items())),
            "kinds": sorted(node.kinds),
            "code_version": node.code_version,
            "backfill_policy": f"{policy.policy_type.value}({policy.max_partitions_per_run})" if policy else None,
            "op": assets_def.node_def.name,
            "skippable": assets_def.specs_by_key[key].skippable,
        }
    checks = {}
    for checks_def in defs.asset_checks or []:
        for spec in checks_def.check_specs:
            checks[f"{spec.asset_key.to_user_string()}:{spec.name}"] = {
                "blocking": spec.blocking,
                "partitions": _partitions(getattr(spec, "partitions_def", None)),
            }
    jobs = {
        job.name: sorted(key.to_user_string() for key in job.asset_layer.executable_asset_keys)
        for job in sorted(defs.resolve_all_job_defs(), key=lambda job: job.name)
        if not job.name.startswith("__")
    }
    sensors = {
        sensor.name: {
            "job": sensor.job_name,
            "default_status": sensor.default_status.value,
            "minimum_interval_seconds": sensor.minimum_interval_seconds,
        }
        for sensor in sorted(defs.sensors or [], key=lambda sensor: sensor.name)
    }
    return {"assets": assets, "checks": checks, "jobs": jobs, "sensors": sensors}


def test_the_graph_matches_its_snapshot(snapshot_json: SnapshotAssertion) -> None:
    defs = build_definitions(Settings(SWE_FORGE_HOME="/tmp/swe-forge-snapshot"))
    assert graph_description(defs) == snapshot_json
