"""SWE-bench 5 runs our tasks: `swe-forge export --format swebench-task-repo`, then SWE-bench's own tools.

The demo world's Python task (pytest, a venv recipe) and JavaScript task (mocha, `npm ci` on the Node image) are
proven as the pipeline proves them, written as task directories, and exported as a task repository. SWE-bench's
checker (`swebench dataset check`) finds no problem, `swebench eval --gold --task-repo` builds both images from
the repository's Dockerfiles and resolves both, and a predictions file with a patch that fixes nothing and an
empty one resolves neither. Our harness, reading the task repository itself (`-i DIR`: the recipe its
task.yaml carries, the tree its `repo.tar` carries, in a fresh home whose git URL reaches nothing) with the same
predictions, gives the same verdicts and, test for test, the same outcomes as
SWE-bench's report; with the oracle it resolves both, with the outcomes of SWE-bench's gold run.
"""

from __future__ import annotations

import dataclasses
import json
import tarfile
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.worlds.git_world import GitWorld
from swe_forge_dagster.demo.worlds.world_agent import VENV_INSTALL
from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.eval_script import NotExportable, RepoTask, base_paths, eval_script, log_form
from swe_forge_dagster.export.task_dir import TaskRecord, write_task_dir
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.tasks.build import task_record
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE, HOST_CA, cli_json, swebench_cli, swebench_outcomes
from tests.support.records import NO_FIX_PATCH, TWO_LANGUAGE_PRS, make_instance, two_language_world, world_context


def test_the_eval_script_has_swebenchs_shape_and_a_runner_without_a_log_form_is_refused() -> None:
    command = "python -m pytest -q {tests}"
    record = RepoTask(make_instance(), BASE_IMAGE, ("pip install -e .",), command, "pytest", ("tests/test_x.py",))
    runner, parser = log_form(record)
    script = eval_script(record)
    assert parser == "parse_log_pytest" and runner.name == "pytest"
    assert script.startswith("#!/bin/bash\nset -uxo pipefail\n")
    assert script.index(">>>>> Start Test Output") < script.index(" -rA") < script.index(">>>>> End Test Output")
    hollow = (
        "diff --git a/t/x.png b/t/x.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/t/x.png differ\n"
    )
    no_content = record.instance.model_copy(update={"test_patch": hollow})
    with pytest.raises(NotExportable, match=r"binary files without their content: t/x\.png"):
        eval_script(dataclasses.replace(record, instance=no_content))
    cargo = dataclasses.replace(record, test_command="cargo test", runner="cargo")
    with pytest.raises(NotExportable, match="cargo"):
        log_form(cargo)


def test_the_eval_script_resets_what_exists_at_base_and_removes_what_the_test_patch_creates() -> None:
    patch = (
        "diff --git a/t/old.py b/t/old.py\n--- a/t/old.py\n+++ b/t/old.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/t/new.png b/t/new.png\nnew file mode 100644\nindex 0000000..e69de29\nGIT binary patch\n"
        "literal 1\nIcmZPo000310RR91\n\nliteral 0\nHcmV?d00001\n\n"
        "diff --git a/t/a.py b/t/b.py\nsimilarity index 90%\nrename from t/a.py\nrename to t/b.py\n"
    )
    assert base_paths(split_sections(patch)) == (["t/old.py", "t/a.py"], ["t/new.png", "t/b.py"])


@pytest.mark.parametrize(
    ("runner", "ours", "theirs"),
    [
        ("pytest", "cd x && python -m pytest -q t.py; exit $rc", "cd x && python -m pytest -rA -q t.py; exit $rc"),
        (
            "mocha",
            "npx mocha --reporter xunit --reporter-options 'a=b c' t.js && echo",
            "npx mocha --reporter tap t.js && echo",
        ),
        ("mocha", "./node_modules/.bin/mocha -R spec t.js", "./node_modules/.bin/mocha --reporter tap t.js"),
        ("go", "go test -json -count=1 ./x > /tmp/r 2>&1", "go test -v -count=1 ./x 2>&1"),
    ],
)
def test_our_command_prints_what_the_registered_parser_reads(runner: str, ours: str, theirs: str) -> None:
    from swe_forge_dagster.languages.registry import runner_for

    form = runner_for(runner).swebench_log
    assert form is not None and form.command(ours) == theirs


def _prove(world: GitWorld, cache: RepoCache, client: docker.DockerClient, repo: str, number: int) -> TaskRecord:
    pr = world.pr(repo, number)
    if pr.language == "Python":
        recipe = EnvRecipe(install_commands=(VENV_INSTALL,), test_command=PYTEST, base_image=BASE_IMAGE)
    else:
        recipe = environment_candidates(cache, pr.repo, pr.base_sha, pr.src_files + pr.test_files).recipes[0]
    sandbox = sandbox_config(build=True, image=BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    result = TaskExecutor(client, cache, sandbox).validate_pr(pr.repo, pr.base_sha, pr.head_sha, recipe)
    context = world_context(pr)
    return task_record(context, result, recipe, pr.title)


@pytest.mark.extended
@pytest.mark.docker
def test_swebench_checks_builds_and_grades_our_exported_tasks_as_our_harness_does(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    world, cache = two_language_world(tmp_path, docker_client)
    records = [_prove(world, cache, docker_client, repo, n) for repo, n in TWO_LANGUAGE_PRS]
    for record in records:
        write_task_dir(tmp_path / "tasks" / record.task_id, record)
    ids = [record.task_id for record in records]

    home, repo = tmp_path / "home", tmp_path / "task-repo"
    export = ("export", "-i", str(tmp_path / "tasks"), "-o", str(repo), "--format", "swebench-task-repo")
    summary = cli_json(home, *export, "--git-url", world.url_template)
    assert sorted(summary["tasks"]) == sorted(ids) and summary["skipped"] == {}
    checked = swebench_cli(tmp_path, "dataset", "check", str(repo))
    assert "looks well formed" in checked.stdout

    swebench_cli(tmp_path, "eval", "swe-forge/tasks", "--gold", "--task-repo", str(repo), "--run-id", "gold", "-j", "1")
    gold = json.loads((tmp_path / "gold.gold.json").read_text())
    assert sorted(gold["resolved_ids"]) == sorted(ids) and gold["error_ids"] == [], gold

    model = "org/no-fix"
    predictions = tmp_path / "preds.jsonl"
    patches = {ids[0]: NO_FIX_PATCH, ids[1]: ""}
    lines = [json.dumps({"instance_id": i, "model_name_or_path": model, "model_patch": p}) for i, p in patches.items()]
    predictions.write_text("\n".join(lines) + "\n")
    swebench_cli(
        tmp_path, "eval", "swe-forge/tasks", "-p", str(predictions), "--task-repo", str(repo), "--run-id", "nofix"
    )
    theirs = json.loads((tmp_path / "org__no-fix.nofix.json").read_text())
    assert theirs["resolved_ids"] == [] and theirs["unresolved_ids"] == [ids[0]]
    assert theirs["empty_patch_ids"] == [ids[1]]

    # the task repository itself, read in a fresh home with a git URL that reaches nothing: built from what it carries
    reader, nowhere = tmp_path / "reader", "file:///nonexistent/{repo}.git"
    common = ("harness", "-i", str(repo), "--git-url", nowhere)
    ours = cli_json(reader, *common, "--predictions", str(predictions), "-o", str(tmp_path / "ours" / "summary.json"))
    by_id = {row["task_id"]: row for row in ours["results"]}
    assert by_id[ids[0]]["status"] == by_id[ids[1]]["status"] == "unresolved", by_id
    outcomes = {c["test_id"]: c["passed"] for c in by_id[ids[0]]["fail_to_pass"] + by_id[ids[0]]["pass_to_pass"]}
    assert outcomes == swebench_outcomes(tmp_path, "nofix", model.replace("/", "__"), ids[0])
    assert not any(outcomes[t] for t in records[0].instance.FAIL_TO_PASS)
    oracle = cli_json(reader, *common, "--agent", "oracle")
    for record in records:
        row = next(r for r in oracle["results"] if r["task_id"] == record.task_id)
        assert row["status"] == "resolved", row
        mine = {c["test_id"]: c["passed"] for c in row["fail_to_pass"] + row["pass_to_pass"]}
        assert mine == swebench_outcomes(tmp_path, "gold", "gold", record.task_id)
    validated = cli_json(reader, "validate", "-i", str(repo), "--git-url", nowhere)
    assert sorted(row["status"] for row in validated["results"]) == ["valid", "valid"], validated
    again = cli_json(reader, "export", "-i", str(repo), "-o", str(tmp_path / "again"), "--format", "swebench-task-repo")
    assert sorted(again["tasks"]) == sorted(ids) and again["skipped"] == {}, again  # re-exported with no clone
    for task_id in ids:  # the same files, modes and times (the archive's header names the stand-in commit)
        assert tree_of(tmp_path / "again" / "tasks" / task_id / "repo.tar") == tree_of(
            repo / "tasks" / task_id / "repo.tar"
        )


def tree_of(archive: Path) -> list[tuple[str, int, int, str, bytes]]:
    with tarfile.open(archive) as tar:
        return [
            (m.name, m.mode, m.mtime, m.linkname, tar.extractfile(m).read() if m.isfile() else b"")  # type: ignore[union-attr]
            for m in tar.getmembers()
        ]


def test_a_task_repository_is_an_input_of_the_harness_and_validate_with_the_recipe_it_carries(tmp_path: Path) -> None:
    """`-i DIR` on a SWE-bench 5 task repository: each `tasks/<id>/` read as SWE-bench's `load_task` reads it, the
    recipe our export records in task.yaml used as the task's environment, and a task SWE-bench could not load
    either (task.yaml not YAML) its own setup error, the others still loaded."""
    from swe_forge_dagster.harness.inputs import load_inputs
    from swe_forge_dagster.harness.models import HarnessTask
    from swe_forge_dagster.tasks.revalidate_inputs import instance_inputs

    inst = make_instance()
    repo = tmp_path / "task-repo"
    (repo / "tasks" / inst.instance_id).mkdir(parents=True)
    (repo / "tasks" / "broken-1").mkdir()
    (repo / "sweb.yaml").write_text("datasets: [swe-forge/tasks]\nsplits: [test]\n")
    recipe = {"image": BASE_IMAGE, "install_commands": ["pip install -e ."], "test_command": "python -m pytest {tests}"}
    meta = {"instance_id": inst.instance_id, "repo": inst.repo, "base_commit": inst.base_commit, "version": "1.0"}
    files = {
        "task.yaml": json.dumps({**meta, "split": "test", "swe_forge_environment": recipe}),  # JSON is YAML
        "tests.json": json.dumps({"FAIL_TO_PASS": inst.FAIL_TO_PASS, "PASS_TO_PASS": inst.PASS_TO_PASS}),
        "gold.patch": inst.patch,
        "test.patch": inst.test_patch or "",
        "problem_statement.md": "Widgets break.",
    }
    for name, text in files.items():
        (repo / "tasks" / inst.instance_id / name).write_text(text)
    (repo / "tasks" / "broken-1" / "task.yaml").write_text("instance_id: [unclosed\n")
    loaded = {item.task_id: item for item in load_inputs(repo, default_image="unused:latest")}
    task = loaded[inst.instance_id]
    assert isinstance(task, HarnessTask), task
    assert (task.image, task.install_commands, task.environment) == (BASE_IMAGE, ("pip install -e .",), "given")
    assert (task.fail_to_pass, task.gold_patch, task.prompt) == (tuple(inst.FAIL_TO_PASS), inst.patch, "Widgets break.")
    broken = loaded["broken-1"]
    assert not isinstance(broken, HarnessTask) and "not a task SWE-bench can load" in broken.reason
    assert [name for name, _ in instance_inputs(repo).jobs] == ["broken-1", inst.instance_id]
