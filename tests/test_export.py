"""Export formats against real data: every shared SWE-bench instance and every real swe-forge
workspace.yaml must read, and our writers must round-trip them unchanged."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from swe_forge_dagster.export.seed_format import (
    SeedFormatError,
    find_task_dirs,
    load_seed_tasks,
    read_seed_workspace,
)
from swe_forge_dagster.export.swebench import (
    EXTRA_COLUMNS,
    SWEBENCH_COLUMNS,
    InstanceFormatError,
    SWEBenchInstance,
    read_instances,
    validate_instance,
    write_jsonl,
    write_parquet,
)
from swe_forge_dagster.export.task_dir import (
    TEMP_DIR_PREFIX,
    TaskDirError,
    TaskRecord,
    read_task_dir,
    write_task_dir,
    yaml_load,
)

SWEBENCH_FILES = (
    "lite-dev/princeton-nlp-SWE-bench_Lite-dev.json",
    "lite-test-and-multilingual/swebench_lite_origin.jsonl",
    "lite-test-and-multilingual/swebench_multi.jsonl",
    "swe-agent-testdata/debug_20240322.json",
    "swe-agent-testdata/swe-bench-dev-easy.json",
    "swe-agent-testdata/swe-bench-dev-easy_first_only.json",
    "swe-agent-testdata/swe-bench-lite-test.json",
)
EXPECTED_COUNTS = {"lite-dev": 23, "swebench_lite_origin": 300, "swebench_multi": 50}
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
# The keys swe-forge's Rust `SweTask` requires (all but original_pr_body) and their serde types.
SEED_REQUIRED: dict[str, type] = {
    **dict.fromkeys(("id", "repo", "base_commit", "merge_commit", "language", "created_at", "patch"), str),
    **dict.fromkeys(("test_patch", "prompt", "status"), str),
    **dict.fromkeys(("fail_to_pass", "pass_to_pass"), list),
    **dict.fromkeys(("install_config", "meta"), dict),
    **dict.fromkeys(("quality_passed", "docker_passed"), bool),
    "difficulty_score": int,
}


def _raw_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


def _assert_same_as_raw(raw: dict[str, Any], back: SWEBenchInstance, *, with_extras: bool = True) -> None:
    """Field by field: every original value is back, unchanged (string forms included)."""
    dumped = back.model_dump()
    for key, value in raw.items():
        if key in TEST_LISTS:
            expected = json.loads(value) if isinstance(value, str) else value
            assert dumped[key] == expected, key
        elif with_extras or key in SWEBENCH_COLUMNS + EXTRA_COLUMNS:
            assert key in dumped, key
            assert dumped[key] == value, key
        else:
            assert key not in dumped, key
    # Nothing invented: keys not in the original are null.
    for key, value in dumped.items():
        if key not in raw and key not in TEST_LISTS:
            assert value is None, key


@pytest.fixture
def swebench_dir(shared_fixtures: Path) -> Path:
    return shared_fixtures / "swebench"


@pytest.fixture
def seed_root(shared_fixtures: Path) -> Path:
    return shared_fixtures / "swe-forge" / "workspaces"


def _task(inst: SWEBenchInstance, **overrides: Any) -> TaskRecord:
    tests = inst.FAIL_TO_PASS or ["tests/test_x.py::test_y"]
    fields: dict[str, Any] = {
        "instance": inst,
        "image": "swe-forge-base:bookworm",
        "install_commands": ["pip install -e .", "pip install pytest"],
        "test_command": "python -m pytest -q",
        "test_files": ["tests/test_x.py"],
        "fail_to_pass_commands": [f'python -m pytest -q "{t}"' for t in tests[:3]],
        "pass_to_pass_commands": [f'python -m pytest -q "{t}"' for t in inst.PASS_TO_PASS[:2]],
        "original_pr_url": f"https://github.com/{inst.repo}/pull/{inst.instance_id.rsplit('-', 1)[-1]}",
    }
    fields.update(overrides)
    return TaskRecord(**fields)


def _instance(**overrides: Any) -> SWEBenchInstance:
    fields: dict[str, Any] = dict(
        instance_id="octo__widgets-42", repo="octo/widgets", base_commit="a" * 40, environment_setup_commit="b" * 40,
        patch="diff --git a/w.py b/w.py\n--- a/w.py\n+++ b/w.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        test_patch="diff --git a/tests/test_w.py b/tests/test_w.py\n", problem_statement="x should be 2\n",
        hints_text="", created_at="2024-05-01T10:00:00Z", version="1.0",
        FAIL_TO_PASS=["tests/test_w.py::test_x"], PASS_TO_PASS=["tests/test_w.py::test_y"],
        difficulty="easy", difficulty_score=0.25, quality_score=0.8, language="python", license="MIT",
    )  # fmt: skip
    fields.update(overrides)
    return SWEBenchInstance(**fields)


# --- SWE-bench instances ---


@pytest.mark.parametrize("rel", SWEBENCH_FILES)
def test_fixture_instances_round_trip(swebench_dir: Path, tmp_path: Path, rel: str) -> None:
    path = swebench_dir / rel
    raws = _raw_records(path)
    instances = read_instances(path)
    assert len(instances) == len(raws) > 0
    for stem, count in EXPECTED_COUNTS.items():
        if stem in rel:
            assert len(instances) == count

    jsonl = write_jsonl(instances, tmp_path / "out.jsonl")
    full = write_parquet(instances, tmp_path / "full.parquet", include_extra_fields=True)
    plain = write_parquet(instances, tmp_path / "plain.parquet")
    for raw, a, b, c in zip(raws, read_instances(jsonl), read_instances(full), read_instances(plain), strict=True):
        _assert_same_as_raw(raw, a)
        _assert_same_as_raw(raw, b)
        _assert_same_as_raw(raw, c, with_extras=False)

    # On disk F2P/P2P are JSON strings; where the original was a string, byte-identical to it.
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    columns = pq.read_table(plain).to_pydict()
    for i, raw in enumerate(raws):
        for key in TEST_LISTS:
            assert isinstance(lines[i][key], str) and isinstance(columns[key][i], str)
            if isinstance(raw[key], str):
                assert lines[i][key] == raw[key] == columns[key][i]
        assert lines[i]["created_at"] == raw["created_at"] == columns["created_at"][i]


def test_every_fixture_instance_validates(swebench_dir: Path) -> None:
    total = 0
    for rel in SWEBENCH_FILES:
        for inst in read_instances(swebench_dir / rel):
            assert validate_instance(inst) == [], inst.instance_id
            total += 1
    assert total == 389


def test_parquet_has_exactly_the_swebench_columns_and_extras(tmp_path: Path) -> None:
    path = write_parquet(
        [_instance(), _instance(instance_id="octo__widgets-43", quality_score=None)], tmp_path / "x.parquet"
    )
    expected = list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    for schema in (pq.read_schema(path), pads.dataset(path, format="parquet").schema):
        assert schema.names == expected
        for field in schema:
            want = pa.float64() if field.name in ("difficulty_score", "quality_score") else pa.string()
            assert field.type == want, field.name
    table = pq.read_table(path)
    assert json.loads(table.column("FAIL_TO_PASS")[0].as_py()) == ["tests/test_w.py::test_x"]
    assert table.column("quality_score").to_pylist() == [0.8, None]


def test_empty_parquet_keeps_schema(tmp_path: Path) -> None:
    path = write_parquet([], tmp_path / "empty.parquet")
    assert pq.read_schema(path).names == list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    assert read_instances(path) == []


def test_datasets_loads_our_parquet(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="`datasets` is not installed (not a project dependency)")
    path = write_parquet([_instance()], tmp_path / "x.parquet")
    loaded = datasets.load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.column_names == list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    row = loaded[0]
    assert json.loads(row["FAIL_TO_PASS"]) == ["tests/test_w.py::test_x"]
    assert row["instance_id"] == "octo__widgets-42"


def test_reads_swe_forge_parquet_export(seed_root: Path) -> None:
    rows = [inst for path in sorted(seed_root.glob("test-run/*/*.parquet")) for inst in read_instances(path)]
    assert len(rows) == 14
    assert all(isinstance(r.FAIL_TO_PASS, list) and r.language for r in rows)
    # swe-forge's ids keep the slash, unlike SWE-bench's owner__repo-N: our validator says so.
    assert any("is not" in p for p in validate_instance(rows[0]))


def test_validate_instance_reports_problems() -> None:
    assert validate_instance(_instance()) == []
    bad = _instance(
        instance_id="octo/widgets-42",
        base_commit="abc",
        patch="",
        test_patch=None,
        FAIL_TO_PASS=[],
        created_at="yesterday",
        difficulty="trivial",
        quality_score=1.5,
    )
    problems = "\n".join(validate_instance(bad))
    needles = "instance_id|base_commit|empty patch|empty test_patch|no FAIL_TO_PASS|created_at|difficulty|quality_score"
    for needle in needles.split("|"):
        assert needle in problems
    overlap = _instance(PASS_TO_PASS=["tests/test_w.py::test_x"])
    assert any("both" in p for p in validate_instance(overlap))


def test_test_lists_accept_strings_and_lists() -> None:
    assert _instance(FAIL_TO_PASS='["a", "b"]').FAIL_TO_PASS == ["a", "b"]
    assert _instance(FAIL_TO_PASS=["a"]).FAIL_TO_PASS == ["a"]
    assert _instance(PASS_TO_PASS="").PASS_TO_PASS == []
    with pytest.raises(ValueError, match="JSON list"):
        _instance(FAIL_TO_PASS="not json")
    created = _instance(created_at=dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    assert created.created_at == "2024-01-02T03:04:05Z"


def test_read_instances_errors_name_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "a__b-1"}) + "\n{oops\n")
    with pytest.raises(InstanceFormatError, match=r"bad\.jsonl:2"):
        read_instances(bad)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps([{"instance_id": "a__b-1", "repo": "a/b"}]))
    with pytest.raises(InstanceFormatError, match=r"record 0 \(a__b-1\)"):
        read_instances(missing)
    with pytest.raises(InstanceFormatError, match="unknown instance file type"):
        read_instances(tmp_path / "x.csv")


def test_writers_are_atomic_and_leave_no_temp_files(tmp_path: Path) -> None:
    write_jsonl([_instance()], tmp_path / "a.jsonl")
    write_parquet([_instance()], tmp_path / "a.parquet")
    write_jsonl([_instance(), _instance(instance_id="octo__widgets-43")], tmp_path / "a.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "a.parquet"]
    assert len(read_instances(tmp_path / "a.jsonl")) == 2


# --- our task directory ---


def test_task_dir_round_trips_every_fixture_instance(swebench_dir: Path, tmp_path: Path) -> None:
    ids: list[str] = []
    for rel in SWEBENCH_FILES:
        for inst in read_instances(swebench_dir / rel):
            task = _task(inst)
            out = write_task_dir(tmp_path / "tasks", task)
            assert out.name == inst.instance_id
            assert read_task_dir(out) == task
            ids.append(inst.instance_id)
    assert len(ids) == 389
    # The files overlap (SWE-agent's copies of Lite test/dev ids): a rewrite replaces the old dir.
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == sorted(set(ids))


def test_task_dir_files(tmp_path: Path) -> None:
    task = _task(_instance(), pass_to_pass_commands=["python -m pytest -q tests/test_w.py::test_y"])
    out = write_task_dir(tmp_path, task)
    assert out == tmp_path / "octo__widgets-42"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "checks.txt",
        "environment.json",
        "patches/patch.diff",
        "patches/test_patch.diff",
        "prompt.md",
        "workspace.yaml",
    ]
    assert (out / "prompt.md").read_text() == "# octo__widgets-42\n\nx should be 2\n\n"
    assert (out / "checks.txt").read_text().splitlines() == [
        'python -m pytest -q "tests/test_w.py::test_x"',
        "python -m pytest -q tests/test_w.py::test_y",
    ]
    env = json.loads((out / "environment.json").read_text())
    assert env == {
        "image": "swe-forge-base:bookworm",
        "install_commands": ["pip install -e .", "pip install pytest"],
        "test_command": "python -m pytest -q",
        "test_files": ["tests/test_x.py"],
    }
    assert (out / "patches" / "patch.diff").read_text() == task.instance.patch
    ws = yaml_load((out / "workspace.yaml").read_text())
    for key, kind in SEED_REQUIRED.items():
        assert isinstance(ws[key], kind), key
    assert all(isinstance(v, str) for v in {**ws["meta"], **ws["install_config"]}.values())
    assert ws["difficulty_score"] == 1 and ws["status"] == "ready"
    assert ws["FAIL_TO_PASS"] == ["tests/test_w.py::test_x"]
    assert ws["install_config"]["install"] == "pip install -e . && pip install pytest"
    assert dt.datetime.fromisoformat(ws["created_at"]).tzinfo is not None


def test_task_dir_replaces_existing_and_cleans_up(tmp_path: Path) -> None:
    write_task_dir(tmp_path, _task(_instance()))
    (tmp_path / "octo__widgets-42" / "stale.txt").write_text("old")
    newer = _task(_instance(problem_statement="changed"))
    out = write_task_dir(tmp_path, newer)
    assert not (out / "stale.txt").exists()
    assert read_task_dir(out).instance.problem_statement == "changed"
    assert [p.name for p in tmp_path.iterdir()] == ["octo__widgets-42"]


@pytest.mark.parametrize(
    ("task_id", "reason"),
    [
        ("..", r"\.\."),
        ("a__b-1/../../etc", "path separator"),
        ("../evil__x-1", "path separator"),
        ("a__b..c-1", r"\.\."),
        (".hidden__x-1", "starts with a dot"),
        ("a__b\x00-1", "NUL"),
        ("a\\b-1", "path separator"),
        ("a b-1", "only A-Z"),
        ("", "empty"),
    ],
)
def test_unsafe_task_ids_are_rejected(tmp_path: Path, task_id: str, reason: str) -> None:
    task = _task(_instance(instance_id=task_id))
    with pytest.raises(ValueError, match=reason):
        write_task_dir(tmp_path / "out", task)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_task_record_rejects_bad_commands_and_paths() -> None:
    with pytest.raises(ValueError, match="one line"):
        _task(_instance(), fail_to_pass_commands=["cat <<EOF > x\nEOF"])
    with pytest.raises(ValueError, match="at least 1"):
        _task(_instance(), fail_to_pass_commands=[])
    with pytest.raises(ValueError, match="relative path"):
        _task(_instance(), test_files=["../../etc/passwd"])
    assert _task(_instance(test_patch=None)).instance.test_patch == ""


def test_read_task_dir_detects_damage(tmp_path: Path) -> None:
    out = write_task_dir(tmp_path, _task(_instance()))
    (out / "patches" / "patch.diff").write_text("edited")
    with pytest.raises(TaskDirError, match="differs"):
        read_task_dir(out)
    (out / "workspace.yaml").write_text("id: [unclosed\n")
    with pytest.raises(TaskDirError, match="invalid YAML"):
        read_task_dir(out)


# --- the seed's task directories ---


def test_every_real_seed_workspace_loads(seed_root: Path) -> None:
    manifest = [line.split("\t")[0] for line in (seed_root / "MANIFEST.tsv").read_text().splitlines()[1:]]
    expected = sorted(seed_root / p for p in manifest if p.endswith("/workspace.yaml"))
    dirs = find_task_dirs(seed_root)
    assert [d / "workspace.yaml" for d in dirs] == expected
    assert len(dirs) == 69
    assert any(d.name == ".github-1" for d in dirs)  # hidden dirs are searched

    tasks, errors = load_seed_tasks(seed_root)
    assert errors == []
    assert len(tasks) == 69 and len({t.id for t in tasks}) == 60
    for task in tasks:
        assert task.repo in task.id and len(task.base_commit) == 40
        assert task.patch and task.prompt and isinstance(task.fail_to_pass, list)
        assert task.difficulty in ("easy", "medium", "hard")
        assert task.created_at and task.created_at.endswith("Z")  # original string, not a datetime
    # Real files vary: 12 of 69 have no fail_to_pass command at all; they still load.
    assert sum(1 for t in tasks if not t.fail_to_pass) == 12
    assert sum(len(t.fail_to_pass) + len(t.pass_to_pass) for t in tasks) == 143
    with_tests = [t for t in tasks if t.test_files]
    assert len(with_tests) == 46
    assert all(f.path and f.content for t in with_tests for f in t.test_files)


def test_malformed_seed_workspaces_give_seed_format_error(tmp_path: Path) -> None:
    cases = {
        "broken": "id: [unclosed\nrepo: x\n",
        "notamap": "- just\n- a list\n",
        "missing": "id: a/b-1\nrepo: a/b\n",
        "badtests": "id: a/b-1\nrepo: a/b\nbase_commit: c\npatch: p\nfail_to_pass: [x]\nprompt: p\n"
        "meta:\n  test_files: 'nope'\n",
    }
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "workspace.yaml").write_text(text)
    problems = {}
    for name in cases:
        with pytest.raises(SeedFormatError) as info:
            read_seed_workspace(tmp_path / name)
        assert str(tmp_path / name / "workspace.yaml") in str(info.value)
        problems[name] = info.value.problem
    assert "malformed YAML" in problems["broken"]
    assert "mapping" in problems["notamap"]
    assert "base_commit, patch, fail_to_pass" in problems["missing"]
    assert "meta.test_files" in problems["badtests"]
    with pytest.raises(SeedFormatError, match="no such file"):
        read_seed_workspace(tmp_path / "nowhere")
    tasks, errors = load_seed_tasks(tmp_path)
    assert tasks == [] and len(errors) == 4


def test_seed_reader_reads_our_task_dirs(swebench_dir: Path, tmp_path: Path) -> None:
    insts = read_instances(swebench_dir / "lite-test-and-multilingual" / "swebench_multi.jsonl")[:5]
    for inst in insts:
        task = _task(inst.model_copy(update={"difficulty": "hard", "difficulty_score": 0.8}))
        out = write_task_dir(tmp_path / "nested" / "deeper", task)
        seed = read_seed_workspace(out)
        assert seed.id == inst.instance_id and seed.repo == inst.repo
        assert seed.base_commit == inst.base_commit and seed.patch == inst.patch
        assert seed.test_patch == inst.test_patch
        assert seed.prompt == inst.problem_statement
        assert seed.fail_to_pass == task.fail_to_pass_commands
        assert seed.pass_to_pass == task.pass_to_pass_commands
        assert seed.difficulty == "hard" and seed.difficulty_score == 3
        assert seed.install_config["test_cmd"] == task.test_command
        # Multilingual's "2017-02-08 12:37:29" becomes RFC 3339 for the seed, and stays exact for us.
        assert seed.created_at is not None and seed.created_at.endswith("Z")
        assert read_task_dir(out).instance.created_at == inst.created_at
    assert len(find_task_dirs(tmp_path)) == 5


def test_find_task_dirs_skips_our_temp_dirs(tmp_path: Path) -> None:
    for rel in ("a/b-1", f"{TEMP_DIR_PREFIX}x", ".dot/c-2", "."):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "workspace.yaml").write_text("id: x\n")
    assert find_task_dirs(tmp_path) == sorted([tmp_path, tmp_path / "a/b-1", tmp_path / ".dot/c-2"])
