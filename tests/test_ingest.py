"""Many hours in one run over real HTTP: 8 downloads in flight, failures isolated, 500s retried."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.common.dagster_names import GHARCHIVE_DOWNLOAD_POOL
from swe_forge_dagster.common.slots import Slots
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.download import ArchiveFetcher, HourNotPublishedError
from swe_forge_dagster.gharchive.hours import archive_file_name
from swe_forge_dagster.gharchive.ingest import HourFailure, HourReport, IngestOptions, ingest_hours
from swe_forge_dagster.orchestration.launcher import hour_range, materialize_hours
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import SettingsFactory, hour
from tests.support.gharchive_server import GharchiveServer


def test_a_run_downloads_eight_hours_at_once_and_isolates_failures(tmp_path: Path) -> None:
    mirror, cache, lake = tmp_path / "mirror", tmp_path / "cache", tmp_path / "lake"
    hours = [hour(k) for k in hour_range("2015-05-01-00:00", "2015-05-01-15:00")]  # 16 hours
    truths = {}
    for when in hours[:-1]:  # the last hour is "not published"
        _, truths[when] = write_hour(mirror, when, events=400)
    with GharchiveServer(mirror) as server:
        for when in hours[:-1]:
            server.delay(archive_file_name(when), 1.0)  # long enough for eight threads to start on a loaded machine
        server.fail_next(archive_file_name(hours[0]), 500)
        fetcher = ArchiveFetcher(
            server.url, cache, backoff_initial=0, slots=Slots(tmp_path / "locks", GHARCHIVE_DOWNLOAD_POOL, 8)
        )
        results = list(ingest_hours(hours, fetcher, lake, IngestOptions(max_parallel_downloads=8)))
        peak = server.max_in_flight
    reports = [r for r in results if isinstance(r, HourReport)]
    failures = [r for r in results if isinstance(r, HourFailure)]
    assert peak == 8
    assert len(reports) == 15
    assert [f.hour for f in failures] == [hours[-1]]
    assert isinstance(failures[0].error, HourNotPublishedError)
    assert "not published yet" in str(failures[0].error)
    first = next(r for r in reports if r.hour == hours[0])
    assert first.download_attempts == 2  # the 500 was retried
    for report in reports:
        assert report.events_read == truths[report.hour].events
        assert report.bytes_downloaded > 0
    total = query(lake, "SELECT count(*) AS n FROM gharchive_pr_events").to_pylist()[0]["n"]
    assert total == sum(sum(t.pr_by_action.values()) for t in truths.values())
    assert list((cache / "gharchive").glob("*.json.gz")) == []  # downloads removed after ingest


def test_asset_over_https_retries_a_500_and_reports_a_404(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    """The real asset, its resource's default TLS trust (SSL_CERT_FILE), a 500 then success, a 404."""
    mirror = tmp_path / "mirror"
    _, truth = write_hour(mirror, hour("2015-06-01-00:00"), events=800)
    with GharchiveServer(mirror, tls=True) as server:
        assert server.ca_file is not None
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        server.fail_next(archive_file_name(hour("2015-06-01-00:00")), 500)
        defs = build_definitions(settings_for(server.url))
        ok, missing = materialize_hours(defs, instance, ["2015-06-01-00:00", "2015-06-01-05:00"])
        assert server.count(archive_file_name(hour("2015-06-01-00:00"))) == 2
    assert ok.success and ok.materialized == ["2015-06-01-00:00"]
    assert not missing.success and any("not published yet" in e and "404" in e for e in missing.errors)
    records = instance.fetch_materializations(dg.AssetKey("gharchive_pr_events"), limit=5).records
    (record,) = records
    metadata = record.asset_materialization.metadata
    assert metadata["download_attempts"].value == 2
    assert metadata["events_read"].value == truth.events
