"""The hourly assets, ingest → pre-filter → enrichment → triage, built over one hourly partitions definition.

Built per `Settings` (their `start_date` is the first hour), never at import: `build_definitions(settings)`
follows the settings it is given, and two definitions built from different settings partition differently.
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from swe_forge_dagster.assets.candidates import build_candidate_assets
from swe_forge_dagster.assets.gharchive import build_gharchive_pr_events
from swe_forge_dagster.assets.triage import build_classified_prs


@dataclass(frozen=True)
class HourlyAssets:
    """The hourly stages over `partitions`, in order; each is the next one's upstream."""

    partitions: dg.HourlyPartitionsDefinition
    events: dg.AssetsDefinition
    candidates: dg.AssetsDefinition
    enriched: dg.AssetsDefinition
    classified: dg.AssetsDefinition

    @property
    def assets(self) -> list[dg.AssetsDefinition]:
        return [self.events, self.candidates, self.enriched, self.classified]


def build_hourly_assets(partitions: dg.HourlyPartitionsDefinition) -> HourlyAssets:
    """Each hourly stage over `partitions`, after the one before."""
    events = build_gharchive_pr_events(partitions)
    candidates, enriched = build_candidate_assets(partitions, events)
    return HourlyAssets(partitions, events, candidates, enriched, build_classified_prs(partitions, enriched))
