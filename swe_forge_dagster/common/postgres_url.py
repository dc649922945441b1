"""`SWE_FORGE_POSTGRES_URL`: the one Postgres every machine shares, and the URL forms its clients need.

The URL holds the password, so it is read by name like the other secrets (`common.secrets`: the
environment, then `.env`) and never written into a config file. Users write it as libpq does
(`postgresql://user:password@127.0.0.1:5432/dagster`, what `psql` and psycopg2 take); SQLAlchemy,
under Dagster's storage, needs the driver in the scheme: the locked SQLAlchemy (2.1) reads a bare
`postgresql://` as psycopg 3, which is not installed, so it gets `postgresql+psycopg2://`.
Either form is accepted here and turned into the other.
"""

from __future__ import annotations

from swe_forge_dagster.common.secrets import secret_from_env

POSTGRES_URL_SETTING = "SWE_FORGE_POSTGRES_URL"
_SCHEMES = ("postgresql+psycopg2://", "postgresql+psycopg://", "postgresql://", "postgres://")


class PostgresUrlError(ValueError):
    """`SWE_FORGE_POSTGRES_URL` is not a Postgres URL (the message names the setting, never the password)."""


def postgres_url() -> str | None:
    """The configured URL (checked), or None when the embedded SQLite instance is used."""
    url = (secret_from_env([POSTGRES_URL_SETTING]) or "").strip()
    if not url:
        return None
    sqlalchemy_url(url)
    return url


def sqlalchemy_url(url: str) -> str:
    """`url` with the `postgresql+psycopg2` scheme (the driver in the lock file)."""
    for scheme in _SCHEMES:
        if url.startswith(scheme) and len(url) > len(scheme):
            return "postgresql+psycopg2://" + url[len(scheme) :]
    shown = url.split("://", 1)[0] + "://..." if "://" in url else "a value without a scheme"
    raise PostgresUrlError(
        f"{POSTGRES_URL_SETTING} must be a URL like postgresql://user:password@127.0.0.1:5432/dagster, not {shown}"
    )


def libpq_url(url: str) -> str:
    """`url` in the form psql, libpq and psycopg2.connect take (`postgresql://`)."""
    return "postgresql://" + sqlalchemy_url(url)[len("postgresql+psycopg2://") :]
