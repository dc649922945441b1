"""Re-base SWE-bench rows on a small git history, so that a benchmark can run repositories whose whole history is too
large to bring onto these machines (issue 36 item 5): one commit per row, dated with the row's `created_at` (so an
era resolution "as of the commit" sees the row's time), the row's `base_commit` rewritten to it and the upstream one
kept as `upstream_base_commit`.

Two sources of trees:

- `trees`: the row's **exact upstream tree**, from a local clone (`fetch`'s mirror, e.g. astropy's 221 MB). A blob
  the clone does not hold (a snapshot leaves its largest files out) is named, and the row is left out unless
  `--allow-missing` keeps it with that file empty (the file is named in the row's `fixture_note`).
- `sdists`: the **release sdist** of the row's version from PyPI (its simple index, sha256 checked), with the row's
  `patch` and `test_patch` reverse-applied (Django's method: `../shared/fixtures/swebench/django-sdists/`). The
  release may be later than the row's base, so tests added in between pass here and are not in the row's lists (the
  corpus names that cause `dataset`); PASS_TO_PASS keeps the ids whose test exists in the tree.

Writes `<out>/swebench/<folder>/rows.jsonl` and `<out>/repos/<owner>+<name>-<folder>.bundle`, the layout of
`../shared/fixtures`, so `benchmarks/env_corpus.py --fixtures <out>` runs them:

    .venv/bin/python benchmarks/rebased_rows.py sdists --rows LITE.jsonl --out /tmp/fx --repo scikit-learn/scikit-learn
    .venv/bin/python benchmarks/rebased_rows.py trees --mirror /work/.mirror/astropy+astropy/repo --rows LITE.jsonl \\
        --out /tmp/fx --repo astropy/astropy
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

SIMPLE_INDEX = "https://pypi.org/simple/{name}/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
IDENTITY = {
    "GIT_AUTHOR_NAME": "swe-forge fixtures",
    "GIT_AUTHOR_EMAIL": "fixtures@invalid",
    "GIT_COMMITTER_NAME": "swe-forge fixtures",
    "GIT_COMMITTER_EMAIL": "fixtures@invalid",
}
PYPI_NAMES = {"scikit-learn/scikit-learn": "scikit-learn"}
"""A repository whose PyPI name is not its GitHub name (the default is the name part)."""


def git(repo: Path, *args: str, env: dict[str, str] | None = None, text_in: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env, input=text_in
    )
    return done.stdout.strip()


def read_rows(path: Path, repo: str, ids: list[str]) -> list[dict[str, Any]]:
    """The rows of `repo` (those named, or all), oldest first."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    chosen = [r for r in rows if r["repo"] == repo and (not ids or r["instance_id"] in ids)]
    missing = set(ids) - {r["instance_id"] for r in chosen}
    if missing:
        raise SystemExit(f"not rows of {repo} in {path}: {sorted(missing)}")
    return sorted(chosen, key=lambda r: r["created_at"])


def commit_tree(work: Path, tree: str, parent: str | None, row: dict[str, Any], message: str) -> str:
    env = {**os.environ, **IDENTITY, "GIT_AUTHOR_DATE": row["created_at"], "GIT_COMMITTER_DATE": row["created_at"]}
    return git(work, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message, env=env)


def rebased(row: dict[str, Any], commit: str) -> dict[str, Any]:
    return {
        **row,
        "upstream_base_commit": row["base_commit"],
        "base_commit": commit,
        "environment_setup_commit": commit,
    }


def from_trees(mirror: Path, rows: list[dict[str, Any]], work: Path, allow_missing: bool) -> list[dict[str, Any]]:
    """One commit per row carrying the upstream tree of its base commit (objects borrowed from the mirror)."""
    (work / "objects" / "info" / "alternates").write_text(f"{(mirror / 'objects').resolve()}\n")
    out, parent = [], None
    for row in rows:
        tree = git(work, "rev-parse", f"{row['base_commit']}^{{tree}}")
        absent = _absent_blobs(work, tree)
        note = ""
        if absent:
            if not allow_missing:
                print(f"left out {row['instance_id']}: the mirror lacks {sorted(absent.values())}")
                continue
            tree = _with_empty_files(work, tree, absent)
            note = f"empty in this fixture (absent from the mirror): {sorted(absent.values())}"
        message = f"{row['instance_id']}: the tree of {row['repo']}@{row['base_commit']}\n"
        parent = commit_tree(work, tree, parent, row, message)
        described = subprocess.run(
            ["git", "-C", str(mirror), "describe", "--tags", "--abbrev=0", row["base_commit"]],
            capture_output=True,
            text=True,
        )
        if described.returncode == 0:
            tag(work, described.stdout.strip(), parent)
        out.append(rebased(row, parent) | ({"fixture_note": note} if note else {}))
    return out


def tag(work: Path, name: str, commit: str) -> None:
    """Tag `commit` with the release tag its upstream commit describes itself by (a build that reads its version
    from git, setuptools-scm's, sees the row's release and not `0.1.dev1`), unless an earlier row has it."""
    if subprocess.run(
        ["git", "-C", str(work), "rev-parse", "-q", "--verify", f"refs/tags/{name}"], capture_output=True
    ).returncode:
        git(work, "tag", name, commit)


def _absent_blobs(work: Path, tree: str) -> dict[str, str]:
    """Blob id -> path for the blobs of `tree` that the object store does not hold."""
    listing = git(work, "ls-tree", "-r", tree)
    blobs = {}
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha = meta.split()
        if kind == "blob":
            blobs[sha] = path
    checked = git(work, "cat-file", "--batch-check", text_in="\n".join(blobs) + "\n")
    return {line.split()[0]: blobs[line.split()[0]] for line in checked.splitlines() if line.endswith(" missing")}


def _with_empty_files(work: Path, tree: str, absent: dict[str, str]) -> str:
    """`tree` with each absent blob's path holding an empty file instead."""
    index = work / "fixture.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    git(work, "read-tree", tree, env=env)
    empty = git(work, "hash-object", "-w", "--stdin", text_in="")
    for path in absent.values():
        git(work, "update-index", "--cacheinfo", f"100644,{empty},{path}", env=env)
    new = git(work, "write-tree", env=env)
    index.unlink()
    return new


def sdists(name: str) -> dict[str, dict[str, Any]]:
    """Every release sdist of `name` on PyPI's simple index: version -> its file entry (url, hashes)."""
    files = httpx.get(SIMPLE_INDEX.format(name=name), headers={"Accept": SIMPLE_JSON}, timeout=60).json()["files"]
    stem = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]", name))
    found = {}
    for entry in files:
        if (match := re.match(rf"^{stem}-(.+)\.tar\.gz$", entry["filename"], re.I)) and not entry.get("yanked"):
            found[match.group(1)] = entry
    return found


def download(entry: dict[str, Any], cache: Path) -> Path:
    """The sdist of a simple-index entry (cached, sha256 checked)."""
    path = cache / entry["filename"]
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != entry["hashes"]["sha256"]:
        cache.mkdir(parents=True, exist_ok=True)
        body = httpx.get(entry["url"], timeout=300, follow_redirects=True).content
        if hashlib.sha256(body).hexdigest() != entry["hashes"]["sha256"]:
            raise ValueError(f"{entry['filename']}: sha256 differs from PyPI's")
        path.write_bytes(body)
    return path


def releases_for(version: str, available: dict[str, dict[str, Any]]) -> list[str]:
    """The final releases that may carry a row of `X.Y` (its line, then the next minor's: SWE-bench names some
    repositories' rows by the version being developed, others by the last release), oldest first."""
    major, minor = (int(part) for part in version.split(".")[:2])
    lines = {(major, minor), (major, minor + 1)}
    chosen = []
    for candidate in available:
        parsed = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.post\d+)?", candidate)
        if parsed and (int(parsed.group(1)), int(parsed.group(2))) in lines:
            chosen.append(candidate)
    return sorted(chosen, key=lambda v: [int(p) for p in re.findall(r"\d+", v)])


def from_sdists(repo: str, rows: list[dict[str, Any]], work: Path, cache: Path) -> list[dict[str, Any]]:
    """One commit per row: the first release sdist on which its patch and test_patch both reverse-apply."""
    name = PYPI_NAMES.get(repo, repo.split("/")[1])
    available = sdists(name)
    checkout = work.parent / "checkout"
    shutil.rmtree(checkout, ignore_errors=True)
    checkout.mkdir()
    out, parent = [], None
    for row in rows:
        patches = {k: checkout.parent / f"{row['instance_id']}.{k}.diff" for k in ("test_patch", "patch")}
        for kind, path in patches.items():
            path.write_text(row[kind])
        tree = next(
            (
                t
                for v in releases_for(row["version"], available)
                if _reverse_applies(t := _release_tree(download(available[v], cache), checkout), patches.values())
            ),
            None,
        )
        if tree is None:
            print(f"left out {row['instance_id']}: reverse-applies on no release of {row['version']} or the next")
            continue
        tree_id = _write_tree(work, tree)
        message = f"{row['instance_id']}: {tree.name} (release sdist) with its patch and test_patch reverse-applied\n"
        parent = commit_tree(work, tree_id, parent, row, message)
        tag(work, "v" + tree.name.rsplit("-", 1)[1], parent)
        kept = _existing_tests(tree, patches["test_patch"], json.loads(row["PASS_TO_PASS"]))
        out.append(rebased(row, parent) | {"PASS_TO_PASS": json.dumps(kept)})
        print(
            f"{row['instance_id']}: on {tree.name}, PASS_TO_PASS {len(kept)} of {len(json.loads(row['PASS_TO_PASS']))}"
        )
    return out


def _reverse_applies(tree: Path, patches: Iterable[Path]) -> bool:
    """Reverse-apply each patch in turn (the tree is left changed only when all apply)."""
    for path in patches:
        if subprocess.run(["git", "apply", "-R", "--check", str(path)], cwd=tree, capture_output=True).returncode:
            return False
        subprocess.run(["git", "apply", "-R", str(path)], cwd=tree, check=True, capture_output=True)
    return True


def _release_tree(archive: Path, checkout: Path) -> Path:
    """The sdist unpacked without its sdist-only metadata (PKG-INFO, *.egg-info)."""
    for entry in checkout.iterdir():
        shutil.rmtree(entry)
    with tarfile.open(archive) as tar:
        tar.extractall(checkout, filter="data")
    (top,) = checkout.iterdir()
    for extra in [top / "PKG-INFO", *top.glob("*.egg-info")]:
        shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    for generated in _cython_outputs(top):
        generated.unlink()
    return top


def _cython_outputs(top: Path) -> list[Path]:
    """C files that Cython generated from a `.pyx` beside them: an sdist ships them, the repository does not (its
    build cythonizes), so a tree made from an sdist leaves them out to build as the repository does."""
    found = []
    for pyx in top.rglob("*.pyx"):
        for suffix in (".c", ".cpp"):
            source = pyx.with_suffix(suffix)
            if source.is_file() and "Generated by Cython" in source.open(errors="replace").readline():
                found.append(source)
    return found


def _write_tree(work: Path, tree: Path) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(work / "fixture.index"), "GIT_WORK_TREE": str(tree)}
    subprocess.run(["git", "--git-dir", str(work), "add", "-A", "-f", "."], cwd=tree, env=env, check=True)
    tree_id = subprocess.run(
        ["git", "--git-dir", str(work), "write-tree"], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    (work / "fixture.index").unlink()
    return tree_id


def _existing_tests(tree: Path, test_patch: Path, ids: list[str]) -> list[str]:
    """The ids whose test exists once the test patch is applied: a pytest id (`path::[Class::]name[params]`) is kept
    when its file defines its function; an id of another runner's form is kept as given."""
    subprocess.run(["git", "apply", str(test_patch)], cwd=tree, check=True, capture_output=True)
    try:
        kept = []
        for test_id in ids:
            if "::" not in test_id:
                kept.append(test_id)
                continue
            path, _, rest = test_id.partition("::")
            name = rest.split("::")[-1].split("[")[0]
            source = tree / path
            if source.is_file() and re.search(rf"^\s*(async\s+)?def {re.escape(name)}\(", source.read_text(), re.M):
                kept.append(test_id)
        return kept
    finally:
        subprocess.run(["git", "apply", "-R", str(test_patch)], cwd=tree, check=True, capture_output=True)


def write_fixture(out: Path, repo: str, folder: str, rows: list[dict[str, Any]], work: Path) -> Path:
    """rows.jsonl and the bundle of `main`, in `../shared/fixtures`' layout; the bundle's path."""
    git(work, "update-ref", "refs/heads/main", rows[-1]["base_commit"])
    git(work, "symbolic-ref", "HEAD", "refs/heads/main")
    (out / "swebench" / folder).mkdir(parents=True, exist_ok=True)
    (out / "swebench" / folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    bundle = out / "repos" / bundle_name(repo, folder)
    bundle.parent.mkdir(parents=True, exist_ok=True)
    git(work, "bundle", "create", str(bundle.resolve()), "HEAD", "main", "--tags")
    return bundle


def bundle_name(repo: str, folder: str) -> str:
    """`<owner>+<name>-<kind>.bundle` for the folder `<name>-<kind>`."""
    return f"{repo.split('/')[0]}+{folder}.bundle"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", choices=("trees", "sdists"))
    parser.add_argument("--rows", type=Path, required=True, help="SWE-bench rows (JSONL)")
    parser.add_argument("--repo", required=True, help="owner/name")
    parser.add_argument("--out", type=Path, required=True, help="fixture root (swebench/ and repos/ made there)")
    parser.add_argument("--mirror", type=Path, help="trees: a local clone holding the rows' base commits")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/swe-forge-sdists"), help="sdists: download cache")
    parser.add_argument("--allow-missing", action="store_true", help="trees: keep a row whose blob is absent")
    parser.add_argument("ids", nargs="*", help="instance ids (default: every row of the repository)")
    args = parser.parse_intermixed_args(argv)  # ids may follow the options
    rows = read_rows(args.rows, args.repo, args.ids)
    folder = f"{args.repo.split('/')[1]}-{args.source}"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "work.git"
        subprocess.run(["git", "init", "-q", "--bare", str(work)], check=True)
        if args.source == "trees":
            if args.mirror is None:
                parser.error("trees needs --mirror")
            made = from_trees(args.mirror, rows, work, args.allow_missing)
        else:
            made = from_sdists(args.repo, rows, work, args.cache)
        if not made:
            raise SystemExit("no row could be re-based")
        bundle = write_fixture(args.out, args.repo, folder, made, work)
    print(f"{len(made)} of {len(rows)} rows: {args.out / 'swebench' / folder / 'rows.jsonl'}, {bundle}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
