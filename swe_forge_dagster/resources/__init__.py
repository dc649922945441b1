"""Dagster resources: thin configurable wrappers that build the domain objects."""

from swe_forge_dagster.resources.gharchive import GharchiveResource
from swe_forge_dagster.resources.github import GitHubResource, MiningResource
from swe_forge_dagster.resources.lake import LakeResource

__all__ = ["GharchiveResource", "GitHubResource", "LakeResource", "MiningResource"]
