"""Dagster's Postgres storage, reached with the one `SWE_FORGE_POSTGRES_URL` every tool understands.

`dagster-postgres` hands its URL to SQLAlchemy as is, and the locked SQLAlchemy reads a plain
`postgresql://` URL as psycopg 3 (not installed): the instance would fail to load with "No module
named 'psycopg'". Its documented fix, `postgres_db: {scheme: postgresql+psycopg2, ...}`, needs the
URL split into parts. This subclass takes the URL in any Postgres form (`common.postgres_url`) and
gives SQLAlchemy the psycopg2 form. The instance config names the variable
(`postgres_url: {env: SWE_FORGE_POSTGRES_URL}`), never its value: the URL holds the password, and
the config travels with every run launched into a container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster._serdes.config_class import ConfigurableClassData
from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config

from swe_forge_dagster.common.postgres_url import sqlalchemy_url


class PostgresStorage(DagsterPostgresStorage):
    """`DagsterPostgresStorage` whose `postgres_url` may be written in any Postgres URL form."""

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> PostgresStorage:
        return cls(
            inst_data=inst_data,
            postgres_url=sqlalchemy_url(pg_url_from_config(config_value)),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            token_provider=get_token_provider_from_config(config_value),
        )
