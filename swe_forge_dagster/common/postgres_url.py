"""`SWE_FORGE_POSTGRES_URL`: the one Postgres every machine shares, and the URL forms its clients need.

The URL holds the password, so it is read by name like the other secrets (`common.secrets`: the
environment, then `.env`) and never written into a config file. Users write it as libpq does
(`postgresql://user:password@127.0.0.1:5432/dagster`, what `psql` and psycopg2 take); SQLAlchemy,
under Dagster's storage, needs the driver in the scheme: the locked SQLAlchemy (2.1) reads a bare
`postgresql://` as psycopg 3, which is not installed, so it gets `postgresql+psycopg2://`.
Either form is accepted here and turned into the other.
"""

from __future__ import annotations

import psycopg2
import psycopg2.extensions

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
    dsn_parts(url)
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


def dsn_parts(url: str) -> dict[str, str]:
    """`url`'s parts as libpq parses them (host, port, dbname, user, password, options...). A URL libpq cannot
    parse is a `PostgresUrlError` naming the setting: libpq's own message quotes the whole URL, password
    included, so it is never passed on."""
    try:
        return psycopg2.extensions.parse_dsn(libpq_url(url))
    except psycopg2.Error:
        raise PostgresUrlError(
            f"{POSTGRES_URL_SETTING} is not a URL libpq can parse (check the brackets around an IPv6 host and "
            "that a % in the password is written %25): postgresql://user:password@host:5432/database"
        ) from None
