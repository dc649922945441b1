"""Where shared data lives, chosen by URI: a local folder (the embedded default) or an S3-compatible store.

`SWE_FORGE_HOME` may be a path, a `file://` URI or `s3://bucket/prefix`. A local home is a `pathlib.Path` as
always; a remote one is a `upath.UPath` over fsspec's `s3fs`, which has the same path API (`/`, `glob`,
`is_file`, `open`), so the lake code does not branch on the scheme except where a library needs to be told
about the filesystem (DuckDB, polars) and where "atomic" means something else: a local file is written to a
temporary name and renamed; an object is one PUT (or one completed multipart upload), which readers see whole
or not at all.

The store's endpoint is a setting (`SWE_FORGE_S3_ENDPOINT_URL`, `SWE_FORGE_S3_REGION`); its credentials are
secrets read by their standard names (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, and `AWS_SESSION_TOKEN` for
temporary credentials), never put in a config object. A missing one, or a scheme we cannot write, is a
`StoreConfigError` that names what to set, raised when the home is first resolved, before any run starts:
without it an `s3://x` home once "worked" by writing a local folder named `s3:`. A home is a URI only when it
contains `://`: `backup:old` is a local folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import io
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from upath import UPath

from swe_forge_dagster.common.secrets import secret_from_env

StorePath: TypeAlias = Path | UPath
"""A path in the store: a local `Path`, or a `UPath` on an object store."""

REMOTE_SCHEMES = ("s3",)
ENDPOINT_SETTING = "SWE_FORGE_S3_ENDPOINT_URL"
REGION_SETTING = "SWE_FORGE_S3_REGION"
STAGING_PREFIX = ".swe-forge-tmp-"  # folders being pulled or replaced; = export.task_dir.TEMP_DIR_PREFIX (skipped)
MD5_METADATA = "md5"  # user metadata (x-amz-meta-md5) of every object written here: the content's MD5
KEY_NAMES = ("AWS_ACCESS_KEY_ID",)
SECRET_NAMES = ("AWS_SECRET_ACCESS_KEY",)
TOKEN_NAMES = ("AWS_SESSION_TOKEN",)  # temporary credentials (STS, SSO, an instance role): optional


class StoreConfigError(ValueError):
    """The store a URI names cannot be used: unknown scheme, or a setting it needs is missing."""


def is_remote_uri(value: str | os.PathLike[str]) -> bool:
    """Whether `value` names an object store (`s3://…`), not a local path."""
    return "://" in str(value) and urlparse(str(value)).scheme in REMOTE_SCHEMES


def is_remote(path: StorePath) -> bool:
    return not isinstance(path, Path)


def s3_options(endpoint_url: str | None = None, region: str | None = None) -> dict[str, Any]:
    """s3fs's options: the endpoint and region given (from `Settings`), else their settings read by name (the
    environment, then .env, as Settings does); the credentials always by their standard names. Names what is
    missing."""
    endpoint = (endpoint_url or secret_from_env([ENDPOINT_SETTING]) or "").strip()
    key, secret = secret_from_env(KEY_NAMES), secret_from_env(SECRET_NAMES)
    missing = [
        name
        for name, value in ((ENDPOINT_SETTING, endpoint), (KEY_NAMES[0], key), (SECRET_NAMES[0], secret))
        if not value
    ]
    if missing:
        raise StoreConfigError(
            f"SWE_FORGE_HOME is on an S3 store but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
            f"set: set {ENDPOINT_SETTING} to the store's URL (e.g. http://127.0.0.1:8333, or "
            "https://s3.amazonaws.com) and the credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
        )
    region = (region or secret_from_env([REGION_SETTING]) or "").strip() or "us-east-1"
    # no listings cache: other machines replace objects at any time, and a cached listing would serve their old
    # ETag (a read then fails its If-Match precondition) or miss their new partitions
    options = {
        "key": key,
        "secret": secret,
        "use_listings_cache": False,
        "client_kwargs": {"endpoint_url": endpoint, "region_name": region},
        "config_kwargs": {"retries": {"max_attempts": 5, "mode": "standard"}},
    }
    if token := secret_from_env(TOKEN_NAMES):
        options["token"] = token
    return options


def store_path(
    value: str | os.PathLike[str], *, endpoint_url: str | None = None, region: str | None = None
) -> StorePath:
    """The store path a setting names: `s3://bucket/prefix` → a `UPath` (settings checked; `endpoint_url` and
    `region` when given, else their settings), a path or `file://` URI → an absolute local `Path`. Any other
    scheme is a `StoreConfigError`."""
    text = str(value)
    if "://" not in text:  # a path, even one with a colon (`backup:old`, `C:\\data`)
        return Path(text).expanduser().resolve()
    parsed = urlparse(text)
    if parsed.scheme in REMOTE_SCHEMES:
        if not parsed.netloc:
            raise StoreConfigError(f"SWE_FORGE_HOME={text!r} names no bucket: use s3://<bucket>[/<prefix>]")
        return UPath(text.rstrip("/"), **s3_options(endpoint_url, region))
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):  # `file://data/home` is host `data`, path `/home`
            raise StoreConfigError(
                f"SWE_FORGE_HOME={text!r} names host {parsed.netloc!r}: a file:// URI is a folder on this machine, "
                "written file:///absolute/path (three slashes) or file://localhost/absolute/path; or give the path"
            )
        return Path(unquote(parsed.path)).expanduser().resolve()
    raise StoreConfigError(
        f"SWE_FORGE_HOME={text!r}: unknown scheme {parsed.scheme!r}; use a local path, file:// or s3://"
    )


def write_bytes_atomic(path: StorePath, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old content or the new, never part of it. An object
    carries its MD5 as user metadata (`MD5_METADATA`): the ETag of a multipart upload (s3fs sends one from
    100 MiB) is not the content's MD5, so without it an unchanged large file would be sent again every time."""
    if is_remote(path):  # one PUT; large data: a multipart upload completed at once
        path.fs.pipe_file(
            path.path, data, Metadata={MD5_METADATA: hashlib.md5(data, usedforsecurity=False).hexdigest()}
        )
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def parquet_bytes(table: pa.Table) -> bytes:
    """`table` as one Parquet file in memory (the lake's compression and row groups)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=64_000)
    return sink.getvalue()


def read_parquet(path: StorePath) -> pa.Table:
    """One Parquet file of the store."""
    if is_remote(path):
        with path.open("rb") as handle:
            return pq.read_table(handle)
    return pq.read_table(path)


def read_parquet_schema(path: StorePath) -> pa.Schema:
    """The schema of one Parquet file of the store (FileNotFoundError when it is missing)."""
    if is_remote(path):
        with path.open("rb") as handle:
            return pq.read_schema(handle)
    return pq.read_schema(path)


def polars_storage_options(path: StorePath) -> dict[str, str] | None:
    """What polars' object-store reader needs for a remote path (None for a local one)."""
    if not is_remote(path):
        return None
    options = path.storage_options
    client = options.get("client_kwargs", {})
    found = {
        "aws_access_key_id": options["key"],
        "aws_secret_access_key": options["secret"],
        "aws_endpoint_url": client.get("endpoint_url", ""),
        "aws_region": client.get("region_name", "us-east-1"),
        "aws_allow_http": "true",
    }
    if options.get("token"):
        found["aws_session_token"] = options["token"]
    return found


def register_with_duckdb(con: Any, path: StorePath) -> None:
    """Let a DuckDB connection read `s3://` globs of the store, through the same fsspec filesystem (DuckDB's
    own httpfs extension is downloaded at first use, and its download host is not reachable everywhere)."""
    if is_remote(path):
        con.register_filesystem(path.fs)


# -- folders kept on the store as well as on local disk ---------------------------------------------------------


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _is_temp(path: Path) -> bool:
    """A writer's temporary file (`.<name>.<random>.tmp`: `write_bytes_atomic`, `tasks.work.TaskWork`)."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def _local_files(root: Path) -> dict[str, Path]:
    """Every file under `root` by its relative POSIX path; writers' temporary files left out."""
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file() and not _is_temp(p)}


def _temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and _is_temp(p)] if root.is_dir() else []


def _remote_files(root: UPath) -> dict[str, str]:
    """Every object under `root` by its relative path -> its ETag (an MD5 for a single PUT; `<md5 of the parts'
    MD5s>-<parts>` for a multipart upload)."""
    fs, base = root.fs, root.path.rstrip("/")
    try:
        found = fs.find(base, detail=True)
    except FileNotFoundError:
        return {}
    return {
        key[len(base) + 1 :]: str(info.get("ETag", "")).strip('"')
        for key, info in found.items()
        if info.get("type") != "directory" and key.startswith(base + "/")
    }


def _same(remote: UPath, etag: str, digest: str) -> bool:
    """Whether the object `remote` (listed with `etag`) holds the content whose MD5 is `digest`: its ETag when
    that is the MD5 (a single PUT), else the MD5 it was written with (`write_bytes_atomic`), read by a HEAD."""
    if etag == digest:
        return True
    try:
        return remote.fs.metadata(remote.path).get(MD5_METADATA) == digest
    except FileNotFoundError:
        return False


def push_tree(local: Path, remote: StorePath) -> int:
    """Make the store's copy of folder `local` equal to it: changed files uploaded (one PUT each), files gone
    locally deleted there. Returns how many objects changed. A local `remote` is the same folder: no-op."""
    if not is_remote(remote):
        return 0
    assert isinstance(remote, UPath)
    mine, theirs = _local_files(local), _remote_files(remote)
    changed = 0
    for rel, path in sorted(mine.items()):
        if rel not in theirs or not _same(remote / rel, theirs[rel], _md5(path)):
            write_bytes_atomic(remote / rel, path.read_bytes())
            changed += 1
    gone = [f"{remote.path.rstrip('/')}/{rel}" for rel in sorted(set(theirs) - set(mine))]
    if gone:
        remote.fs.rm(gone)
    return changed + len(gone)


def pull_tree(remote: StorePath, local: Path) -> int:
    """Make folder `local` equal to the store's copy when the store has one (another machine may have run the
    last stage). Returns how many files changed; nothing on the store leaves `local` as it is. The new folder
    is built beside it and swapped in whole (`_replace_dir`): a reader on this machine sees the old folder or
    the new one, never a mix of files from two stages."""
    if not is_remote(remote):
        return 0
    assert isinstance(remote, UPath)
    return _pull_listed(remote, local, _remote_files(remote))


def pull_subtrees(remote: StorePath, local: Path) -> int:
    """`pull_tree` for each folder directly under the store's `remote` (one listing for all): the exported tasks
    of every machine. Local folders the store does not have are kept. Returns how many files changed."""
    if not is_remote(remote):
        return 0
    assert isinstance(remote, UPath)
    by_folder: dict[str, dict[str, str]] = {}
    for rel, etag in _remote_files(remote).items():
        folder, slash, inner = rel.partition("/")
        if slash:
            by_folder.setdefault(folder, {})[inner] = etag
    return sum(_pull_listed(remote / name, local / name, files) for name, files in sorted(by_folder.items()))


def _pull_listed(remote: UPath, local: Path, theirs: dict[str, str]) -> int:
    if not theirs:
        return 0
    mine = _local_files(local)
    stale = [
        rel for rel, etag in sorted(theirs.items()) if rel not in mine or not _same(remote / rel, etag, _md5(mine[rel]))
    ]
    gone = set(mine) - set(theirs)
    if not stale and not gone:
        return 0
    local.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{local.name}.", dir=local.parent))
    try:
        for rel in sorted(theirs):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel in stale:
                with (remote / rel).open("rb") as handle:
                    target.write_bytes(handle.read())
            else:  # unchanged: the same file (a writer here replaces files by rename, so the link is safe)
                try:
                    os.link(mine[rel], target)
                except OSError:
                    shutil.copy2(mine[rel], target)
        for path in _temp_files(local):  # a writer's temporary file is not ours to drop
            (staging / path.relative_to(local)).parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):  # renamed into place meanwhile: it is in `theirs` or gone
                os.link(path, staging / path.relative_to(local))
        staging.chmod(0o755)
        _replace_dir(staging, local)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return len(stale) + len(gone)


def _replace_dir(new: Path, final: Path) -> None:
    """Put folder `new` at `final`. Linux swaps the two in one step (renameat2 RENAME_EXCHANGE), then `new`
    holds the old folder for the caller to remove; elsewhere the old folder is moved aside first (an instant
    with no folder, as `export.task_dir.write_task_dir`)."""
    if not final.exists():
        os.rename(new, final)
        return
    if _exchange(new, final):
        return
    old = final.with_name(f"{STAGING_PREFIX}{final.name}.old-{uuid.uuid4().hex[:8]}")
    os.rename(final, old)
    try:
        os.rename(new, final)
    except BaseException:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 with RENAME_EXCHANGE); False when the system cannot."""
    renameat2 = getattr(_LIBC, "renameat2", None) if _LIBC is not None else None
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no C library to load
    _LIBC = None
