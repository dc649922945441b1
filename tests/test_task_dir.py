"""Task directories against real data: our task-directory writer and reader round-trip every shared
SWE-bench instance, write the expected files, reject unsafe ids, commands and damaged directories;
and the seed-format reader loads every real swe-forge workspace.yaml, reports malformed ones with
a SeedFormatError, and reads the task directories we write."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from swe_forge_dagster.export.seed_format import (
    SeedFormatError,
    find_task_dirs,
    load_seed_tasks,
    read_seed_workspace,
)
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.export.task_dir import (
    TEMP_DIR_PREFIX,
    TaskDirError,
    read_task_dir,
    write_task_dir,
    yaml_load,
)
from tests.support.records import make_instance, make_task
from tests.support.swebench_files import SWEBENCH_FILES

# The keys swe-forge's Rust `SweTask` requires (all but original_pr_body) and their serde types.
SEED_REQUIRED: dict[str, type] = {
    **dict.fromkeys(("id", "repo", "base_commit", "merge_commit", "language", "created_at", "patch"), str),
    **dict.fromkeys(("test_patch", "prompt", "status"), str),
    **dict.fromkeys(("fail_to_pass", "pass_to_pass"), list),
    **dict.fromkeys(("install_config", "meta"), dict),
    **dict.fromkeys(("quality_passed", "docker_passed"), bool),
    "difficulty_score": int,
}


# --- our task directory ---


def test_task_dir_round_trips_every_fixturemake_instance(swebench_dir: Path, tmp_path: Path) -> None:
    ids: list[str] = []
    for rel in SWEBENCH_FILES:
        for inst in read_instances(swebench_dir / rel):
            task = make_task(inst)
            out = write_task_dir(tmp_path / "tasks", task)
            assert out.name == inst.instance_id
            assert read_task_dir(out) == task
            ids.append(inst.instance_id)
    assert len(ids) == 389
    # The files overlap (SWE-agent's copies of Lite test/dev ids): a rewrite replaces the old dir.
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == sorted(set(ids))


def test_task_dir_files(tmp_path: Path) -> None:
    task = make_task(make_instance(), pass_to_pass_commands=["python -m pytest -q tests/test_w.py::test_y"])
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
        "runner": "pytest",
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
    write_task_dir(tmp_path, make_task(make_instance()))
    (tmp_path / "octo__widgets-42" / "stale.txt").write_text("old")
    newer = make_task(make_instance(problem_statement="changed"))
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
    task = make_task(make_instance(instance_id=task_id))
    with pytest.raises(ValueError, match=reason):
        write_task_dir(tmp_path / "out", task)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_task_record_rejects_bad_commands_and_paths() -> None:
    with pytest.raises(ValueError, match="one line"):
        make_task(make_instance(), fail_to_pass_commands=["cat <<EOF > x\nEOF"])
    with pytest.raises(ValueError, match="at least 1"):
        make_task(make_instance(), fail_to_pass_commands=[])
    with pytest.raises(ValueError, match="relative path"):
        make_task(make_instance(), test_files=["../../etc/passwd"])
    assert make_task(make_instance(test_patch=None)).instance.test_patch == ""


def test_read_task_dir_detects_damage(tmp_path: Path) -> None:
    out = write_task_dir(tmp_path, make_task(make_instance()))
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
        task = make_task(inst.model_copy(update={"difficulty": "hard", "difficulty_score": 0.8}))
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
