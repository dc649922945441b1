"""The environment corpus and its rate (issue 22 item 4): `validate`, the oracle and the empty agent over every
instance in `../shared/fixtures` that can run offline, as a new user would run them.

The corpus: the 32 SWE-bench Lite test instances of the bundled repositories (requests 6, flask 3, pytest 17, pylint
6), SWE-bench Lite's 14 Django rows re-based on release sdists (`django-sdists/`, tested with Django's own
runtests.py), 13 SymPy rows on commits carrying their upstream trees (`sympy-trees/`, tested with `bin/test`),
SWE-bench Lite dev's marshmallow-1359 and -1343, SWE-bench Multilingual's fmt-2457, fmt-3729 and axios-5085, and the
seed task directories whose repositories are bundled (filelock-483, opendatahub-gtfs-api-3). Each instance runs
through the `swe-forge` CLI itself (`validate -i`, `harness --agent oracle`, `harness` with `examples/emptyagent`),
with no environment given, no API key, the bundles as git remotes and the host CA bundle: the same code path as a
user's.

Per instance it prints: validate's status, the oracle's and the empty agent's, how the recipe was found
(`manifest`, `era`, `agent`, or the seed task's own `install_config`), the runtime the environment records,
the LLM calls made (the call ledger's growth), the seconds, and each failure's cause in one line, classed as
`ours` (the environment or the harness), `dataset` (every given verdict holds, more tests pass here than the
dataset lists: its lists were made on other releases) or `instance` (needs the internet, not judgeable here). The
rate is over the instances whose failures are not the instance's (a `dataset` one counts as a miss): valid,
resolved by the oracle, not by the empty agent.

    .venv/bin/python benchmarks/env_corpus.py --only 'pallets__flask-*' --json corpus.json
    .venv/bin/python benchmarks/env_corpus.py --limit 5 --json corpus.json   # resumable: done rows are kept

The machine is shared: each instance runs under an exclusive lock on `--lock` (flock, the Docker tests' lock).
"""

from __future__ import annotations

import argparse
import fcntl
import fnmatch
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_forge_dagster.execution.runtime_record import describe
from swe_forge_dagster.export.swebench import read_instances, write_jsonl
from swe_forge_dagster.tasks.revalidate_instances import SUPERSET

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
SWEBENCH = FIXTURES / "swebench"
SEEDS = FIXTURES / "swe-forge" / "workspaces"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
EMPTY_AGENT = ("--agent-dir", str(ROOT / "examples" / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")
LITE_TEST_REPOS = ("psf/requests", "pallets/flask", "pytest-dev/pytest", "pylint-dev/pylint")
MULTILINGUAL = ("fmtlib__fmt-2457", "fmtlib__fmt-3729", "axios__axios-5085")
LITE_DEV = ("marshmallow-code__marshmallow-1359", "marshmallow-code__marshmallow-1343")
REBASED_BUNDLE = "{owner}+{folder}.bundle"
"""Rows re-based on a small history: `swebench/<folder>/rows.jsonl` beside `repos/<owner>+<folder>.bundle` in a
fixture root (`benchmarks/rebased_rows.py` makes them): in `../shared/fixtures`, 14 Django rows of SWE-bench Lite's
test split on Django's release sdists (`django-sdists/`, tested with runtests.py); with `--fixtures`, others, such as
SymPy rows on their exact upstream trees (`sympy-trees/`) or scikit-learn's on its sdists (`scikit-learn-sdists/`)."""
SEED_DIRS = ("run-medium/tox-dev/filelock-483", "test-run/easy/noi-techpark/opendatahub-gtfs-api-3")
INSTANCE_CAUSES = ("needs a network host", "not judgeable", "not_judgeable", "patch does not apply")
"""Failure text that is the instance's (it cannot be judged offline, or is broken upstream), not the environment's or
the harness's. A patch that `git apply` refuses at the base commit was made on another commit: the seed task
filelock-483's gold patch has the `_api.py` of 7dfdb02 (its `index a6adc399..` line), not of its base 79ca84f."""
TIMEOUT_S = 3 * 3600


@dataclass(frozen=True)
class Item:
    """One corpus entry: a SWE-bench record (written to its own JSONL) or a seed task directory."""

    name: str
    repo: str
    record: Any = None  # SWEBenchInstance
    seed_dir: Path | None = None
    bundle: Path | None = None  # else `repos/<owner>+<name>.bundle` of ../shared/fixtures


def corpus(extra_roots: tuple[Path, ...] = ()) -> list[Item]:
    """Every instance of the corpus whose fixture is present, in a stable order; then the re-based rows of each
    extra fixture root."""
    items: list[Item] = []
    lite = SWEBENCH / "lite-test-and-multilingual" / "swebench_lite_origin.jsonl"
    if lite.is_file():
        items += [Item(i.instance_id, i.repo, i) for i in read_instances(lite) if i.repo in LITE_TEST_REPOS]
    dev = SWEBENCH / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
    if dev.is_file():
        items += [Item(i.instance_id, i.repo, i) for i in read_instances(dev) if i.instance_id in LITE_DEV]
    multi = SWEBENCH / "lite-test-and-multilingual" / "swebench_multi.jsonl"
    if multi.is_file():
        items += [Item(i.instance_id, i.repo, i) for i in read_instances(multi) if i.instance_id in MULTILINGUAL]
    for root in (FIXTURES, *extra_roots):
        items += rebased(root)
    for relative in SEED_DIRS:
        path = SEEDS / relative
        if (path / "workspace.yaml").is_file():
            owner, name = relative.split("/")[-2:]
            items.append(Item(f"{owner}/{name}", f"{owner}/{name.rsplit('-', 1)[0]}", seed_dir=path))
    return items


def rebased(root: Path) -> list[Item]:
    """The re-based rows under a fixture root: each `swebench/<folder>/rows.jsonl` whose bundle is there."""
    items = []
    for rows in sorted(root.glob("swebench/*/rows.jsonl")):
        for record in read_instances(rows):
            owner = record.repo.split("/")[0]
            bundle = root / "repos" / REBASED_BUNDLE.format(owner=owner, folder=rows.parent.name)
            if bundle.is_file():
                items.append(Item(record.instance_id, record.repo, record, bundle=bundle))
    return items


def remote(work: Path, item: Item) -> None:
    """The item's bundle in the bare remote `work/remotes/<owner>/<name>.git` (cloned once; another fixture's
    bundle of the same repository is fetched into it)."""
    target = work / "remotes" / f"{item.repo}.git"
    bundle = item.bundle or FIXTURES / "repos" / f"{item.repo.replace('/', '+')}.bundle"
    if not target.exists():
        subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(target)], check=True)
    elif item.bundle is not None:
        refs = (f"+refs/heads/*:refs/fixtures/{item.bundle.stem}/*", "+refs/tags/*:refs/tags/*")
        subprocess.run(["git", "--git-dir", str(target), "fetch", "-q", str(bundle), *refs], check=True)


def cli(work: Path, *args: str) -> dict[str, Any]:
    """`swe-forge <args> --json` as a user runs it, against the bundles; its JSON (or the error it printed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")}
    env |= {
        "SWE_FORGE_HOME": str(work / "home"),
        "SWE_FORGE_START_DATE": "2015-01-01",
        "SWE_FORGE_GIT_URL": f"file://{work}/remotes/{{repo}}.git",
    }
    if HOST_CA.is_file():
        env["SWE_FORGE_CA_BUNDLE"] = str(HOST_CA)
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=work,
    )
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"error": f"exit {done.returncode}: {(done.stderr or done.stdout)[-600:]}"}


def llm_calls(work: Path) -> int:
    """Calls in the home's call ledger (`llm_calls`), so a run's growth is its LLM calls."""
    return sum(
        sum(1 for line in path.read_text().splitlines() if line.strip())
        for path in (work / "home").rglob("llm_calls/*.jsonl")
    )


def run_item(item: Item, work: Path) -> dict[str, Any]:
    """validate, oracle and empty agent on one instance; its row."""
    remote(work, item)
    if item.seed_dir is not None:
        target = str(item.seed_dir)
    else:
        path = work / "inputs" / f"{item.name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl([item.record], path)
        target = str(path)
    calls, started = llm_calls(work), time.perf_counter()
    validated = _first(cli(work, "validate", "-i", target))
    timed = {"validate_s": round(time.perf_counter() - started, 1)}
    mark = time.perf_counter()
    oracle = _first(cli(work, "harness", "-i", target, "--agent", "oracle", "--no-record"))
    timed["oracle_s"] = round(time.perf_counter() - mark, 1)
    mark = time.perf_counter()
    empty = _first(cli(work, "harness", "-i", target, *EMPTY_AGENT, "--no-record"))
    timed["empty_s"] = round(time.perf_counter() - mark, 1)
    runtime = validated.get("runtime") or oracle.get("runtime") or {}
    row = {
        "instance": item.name,
        "repo": item.repo,
        "validate": validated.get("status", "error"),
        "oracle": oracle.get("status", "error"),
        "empty": empty.get("status", "error"),
        "found_by": found_by(item, validated),
        "recipe": validated.get("recipe") or "",
        "recipes_tried": validated.get("recipes_tried") or [],
        "runtime": runtime,
        "install_s": int(runtime.get("install-seconds") or 0),
        "llm_calls": llm_calls(work) - calls,
        "seconds": round(time.perf_counter() - started, 1),
        **timed,
        "set_aside": len(validated.get("set_aside") or {}),
        "failures": failures(validated, oracle, empty),
    }
    row["ok"] = not row["failures"]
    return row


def _first(summary: dict[str, Any]) -> dict[str, Any]:
    """The one result of a one-instance run, with `status`; the run's error when there is none."""
    results = summary.get("results") or []
    if not results:
        return {"status": "error", "reason": summary.get("error", "no result")}
    row = dict(results[0])
    row.setdefault("reason", row.get("error"))
    return row


def found_by(item: Item, validated: dict[str, Any]) -> str:
    """How the recipe was found: the rung the environment records, else `era` for a dated resolution, the seed
    task's own `install_config`, or the manifests (validate gives no agent without an API key)."""
    runtime = validated.get("runtime") or {}
    rung = next((v for k, v in runtime.items() if "rung" in k or "found" in k), None)
    if rung:
        return str(rung)
    if any("resolution" in k for k in runtime):
        return "era"
    return "task" if item.seed_dir is not None else "manifest"


def failures(validated: dict[str, Any], oracle: dict[str, Any], empty: dict[str, Any]) -> list[dict[str, str]]:
    """Each step that did not give the expected outcome: its cause in one line and whose it is."""
    found = []
    if validated.get("status") != "valid":
        found.append(("validate", validated.get("status", ""), _why(validated)))
    if oracle.get("status") != "resolved":
        found.append(("oracle", oracle.get("status", ""), oracle.get("reason") or ""))
    if empty.get("status") == "resolved" or empty.get("status") in ("setup_error", "test_error", "error"):
        found.append(("empty agent", empty.get("status", ""), empty.get("reason") or ""))
    return [
        {"step": step, "status": status, "cause": " ".join(cause.split())[:300], "whose": whose(status, cause)}
        for step, status, cause in found
    ]


def _why(validated: dict[str, Any]) -> str:
    """validate's reason, or the first per-id difference when the reason is only counts."""
    differences = validated.get("differences") or {}
    first = next(iter(differences.items()), None)
    extra = f" | {first[0]}: {first[1]}" if first else ""
    return f"{validated.get('reason') or ''}{extra}"


def whose(status: str, cause: str) -> str:
    """`instance` when the cause is the instance's (needs the internet, not judgeable offline), `dataset` when
    every given verdict holds here and the lists here have more tests (`revalidate_instances.SUPERSET`: counted as
    a miss, since the lists are not equal id for id), else `ours`."""
    if status == "not_judgeable":
        return "instance"
    if SUPERSET in cause:  # before the network causes: a test set aside beside the lists' difference
        return "dataset"
    return "instance" if any(c in cause for c in INSTANCE_CAUSES) else "ours"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'instance':38} {'validate':13} {'oracle':11} {'empty':11} {'found':9} {'llm':>3} {'s':>6}  runtime / cause"
    )
    for row in rows:
        print(
            f"{row['instance']:38} {row['validate']:13} {row['oracle']:11} {row['empty']:11} {row['found_by']:9} "
            f"{row['llm_calls']:3} {row['seconds']:6}  {describe(row['runtime'])}"
        )
        for failure in row["failures"]:
            print(f"{'':40}[{failure['whose']}] {failure['step']} {failure['status']}: {failure['cause'][:200]}")
    print(rate(rows))
    print(per_repository(rows))


def per_repository(rows: list[dict[str, Any]]) -> str:
    """Per repository: rows, valid, resolved by the oracle, resolved by the empty agent, seconds, install seconds
    (a compiled repository's build, paid once per environment image), and its misses' causes by whose they are."""
    lines = [f"{'repository':36} {'rows':>4} {'valid':>5} {'oracle':>6} {'empty':>5} {'s':>7} {'install s':>9}  misses"]
    for repo in sorted({r["repo"] for r in rows}):
        mine = [r for r in rows if r["repo"] == repo]
        whose = sorted({f["whose"] for r in mine for f in r["failures"]})
        lines.append(
            f"{repo:36} {len(mine):4} {sum(r['validate'] == 'valid' for r in mine):5} "
            f"{sum(r['oracle'] == 'resolved' for r in mine):6} {sum(r['empty'] == 'resolved' for r in mine):5} "
            f"{sum(r['seconds'] for r in mine):7.0f} {max((r.get('install_s') or 0) for r in mine):9}  "
            f"{', '.join(whose) or '-'}"
        )
    return "\n".join(lines)


def rate(rows: list[dict[str, Any]]) -> str:
    """The rate over the instances feasible offline (no failure of the instance's own)."""
    instance = [r for r in rows if any(f["whose"] == "instance" for f in r["failures"])]
    feasible = [r for r in rows if r not in instance]
    ok = sum(r["ok"] for r in feasible)
    calls = sum(r["llm_calls"] for r in rows)
    share = f"{100 * ok / len(feasible):.0f}%" if feasible else "n/a"
    return (
        f"{ok}/{len(feasible)} feasible offline are valid, resolved by the oracle and not by the empty agent "
        f"({share}); {len(instance)} not judgeable offline (the instance's); {calls} LLM calls"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="instance name glob (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="at most N instances (after --only and resume)")
    parser.add_argument("--json", type=Path, default=None, help="rows written here; rows already there are kept")
    parser.add_argument("--work", type=Path, default=Path("/tmp/swe-forge-corpus"), help="remotes, home, inputs")
    parser.add_argument(
        "--fixtures", type=Path, action="append", default=[], help="another fixture root (rebased_rows.py's --out)"
    )
    parser.add_argument("--lock", type=Path, default=Path("/tmp/swe-forge-docker-tests.lock"))
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = json.loads(args.json.read_text())["rows"] if args.json and args.json.exists() else []
    done = {row["instance"] for row in rows}
    items = [
        i for i in corpus(tuple(args.fixtures)) if not args.only or any(fnmatch.fnmatch(i.name, g) for g in args.only)
    ]
    todo = [i for i in items if i.name not in done][: args.limit]
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    for index, item in enumerate(todo, 1):
        print(f"[{index}/{len(todo)}] {item.name}", file=sys.stderr, flush=True)
        with args.lock.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the machine is shared: one Docker-heavy run at a time
            rows.append(run_item(item, work))
        if args.json:
            args.json.write_text(json.dumps({"rows": rows, "rate": rate(rows)}, indent=1) + "\n")
    print_table([r for r in rows if r["instance"] in {i.name for i in items}])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
