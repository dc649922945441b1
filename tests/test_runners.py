"""Filling test commands and finding their reports (`execution.runners`), and what a harness run records
(`harness.session`): small pieces that validation and evaluation share."""

from __future__ import annotations

import contextlib
import types
from pathlib import Path

import pytest

from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.runners import fill_tests
from swe_forge_dagster.harness.models import HarnessConfig, TaskLoadError
from swe_forge_dagster.harness.session import evaluate_and_record
from swe_forge_dagster.harness.store import has_result, read_results, task_key
from swe_forge_dagster.languages.python.runner import JUNIT, PYTEST
from swe_forge_dagster.languages.registry import runner_for


def test_recipes_are_format_templates_and_literal_braces_still_work() -> None:
    # the environment agent's recipes double other braces (they are checked with str.format)
    assert fill_tests("find . -exec rm {{}} + ; pytest {tests}", ["a b.py", "c.py"]) == (
        "find . -exec rm {} + ; pytest 'a b.py' c.py"
    )
    # a seed or SWE-bench command that is no format template keeps its braces
    assert fill_tests("echo {} && pytest {tests}", ["t.py"]) == "echo {} && pytest t.py"
    recipe = EnvRecipe((), "rm -f {{x}}; " + PYTEST)
    assert recipe.tests_command(["t.py"]) == runner_for().command(recipe.test_command, ["t.py"], JUNIT)[0]


def test_the_report_path_is_fresh_unless_the_command_names_its_own() -> None:
    runner = runner_for("pytest")
    command, report = runner.command(PYTEST, ["t.py"], "/tmp/fresh-1.xml")
    assert report == "/tmp/fresh-1.xml" and "--junitxml=/tmp/fresh-1.xml" in command and JUNIT not in command
    command, report = runner.command("pytest --junitxml='/out/my report.xml' {tests}", ["t.py"], "/tmp/fresh-2.xml")
    assert report == "/out/my report.xml"
    assert runner.command("pytest {tests}", ["t.py"], "/tmp/fresh-3.xml") == ("pytest t.py", JUNIT)


def test_a_result_that_cannot_be_recorded_is_still_returned(tmp_path: Path) -> None:
    harness = types.SimpleNamespace(config=HarnessConfig(agent="oracle"))
    item = TaskLoadError(task_id="owner/repo-1", source="x", reason="malformed YAML")
    blocked = tmp_path / "lake"
    blocked.write_text("a file where the lake should be")
    result = evaluate_and_record(harness, item, lake_dir=blocked, run_id="r")  # type: ignore[arg-type]
    assert result.status.value == "setup_error" and "malformed YAML" in (result.reason or "")
    lake = tmp_path / "real-lake"
    evaluate_and_record(harness, item, lake_dir=lake, run_id="r")  # type: ignore[arg-type]
    assert has_result(lake, "oracle", "owner/repo-1") and task_key("owner/repo-1") != "owner/repo-1"
    assert [row["task_id"] for row in read_results(lake, "oracle")] == ["owner/repo-1"]


def test_an_agent_is_named_the_same_from_the_cli_and_the_ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "my-agent"
    agent.mkdir()
    monkeypatch.chdir(tmp_path)
    relative = HarnessConfig(agent="command", agent_dir=Path("my-agent"), agent_cmd="python -m a")
    absolute = HarnessConfig(agent="command", agent_dir=agent, agent_cmd="python -m a")
    assert relative.agent_label == absolute.agent_label
    assert relative.agent_label.startswith("python -m a @ my-agent#") and str(tmp_path) not in relative.agent_label


def test_an_agent_is_named_by_its_content_not_by_where_it_lies(tmp_path: Path) -> None:
    """The same files in two checkouts are one agent; one changed byte makes another."""
    labels = []
    for checkout, text in (("a", "print(1)\n"), ("b", "print(1)\n"), ("c", "print(2)\n")):
        folder = tmp_path / checkout / "agent"
        (folder / "__pycache__").mkdir(parents=True)
        (folder / "main.py").write_text(text)
        (folder / "__pycache__" / "main.pyc").write_bytes(checkout.encode())  # a cache: not the agent's content
        labels.append(HarnessConfig(agent="command", agent_dir=folder, agent_cmd="python main.py").agent_label)
    assert labels[0] == labels[1] != labels[2]


@pytest.mark.docker
def test_a_swebench_instance_is_graded_by_its_cut_ids_in_a_real_run(docker_client: object) -> None:
    """In a container: a suite whose ids have spaces, checked with the ids SWE-bench lists (cut at the first
    whitespace) and with our full ids; both forms give the same verdicts, and an id in the wrong form is missing."""
    from swe_forge_dagster.execution.repo_box import put_files
    from swe_forge_dagster.execution.sandbox import Sandbox
    from swe_forge_dagster.harness.checks import run_checks
    from swe_forge_dagster.harness.models import HarnessTask
    from tests.support.common import BASE_IMAGE

    module = (
        b"import pytest\n\n@pytest.mark.parametrize('m', ['custom-Custom error message.', 'plain'])\n"
        b"def test_fail(m):\n    assert m != 'plain'\n\ndef test_ok():\n    pass\n"
    )
    full = ("tests/test_m.py::test_fail[custom-Custom error message.]", "tests/test_m.py::test_ok")
    cut = ("tests/test_m.py::test_fail[custom-Custom", "tests/test_m.py::test_ok")
    common = {
        "repo": "o/r",
        "base_commit": "0" * 40,
        "prompt": "p",
        "mode": "tests",
        "image": BASE_IMAGE,
        "test_command": PYTEST,
        "run_files": ("tests/test_m.py",),
    }
    with Sandbox.start(
        docker_client, sandbox_config(build=True, image=BASE_IMAGE, network="none"), name_hint="ids"
    ) as box:  # type: ignore[arg-type]
        put_files(box, {"/repo/tests/test_m.py": module})
        graded = {}
        for name, ids, form in (("cut", cut, "swebench"), ("full", full, "full"), ("wrong", cut, "full")):
            task = HarnessTask(task_id=name, fail_to_pass=ids[:1], pass_to_pass=ids[1:], id_form=form, **common)
            run = run_checks(box, task, 120)
            graded[name] = [(c.test_id, c.outcome) for c in run.fail_to_pass + run.pass_to_pass]
    assert graded["cut"] == [(cut[0], "passed"), (cut[1], "passed")]
    assert graded["full"] == [(full[0], "passed"), (full[1], "passed")]
    assert graded["wrong"] == [(cut[0], "missing"), (cut[1], "passed")]


@pytest.mark.docker
def test_new_dependencies_get_a_thin_layer_and_alternating_tasks_rebuild_nothing(
    tmp_path: Path, docker_client: object
) -> None:
    """Tasks alternating between two sets of manifests: the repository's image for one, a layer on it for the
    other, each built once; the layer holds the other commit's install; a replaced layer does not pile up."""
    import docker

    from swe_forge_dagster.environments.environment import BUILT_AT_LABEL, Environments, env_image_tag
    from tests.support.common import BASE_IMAGE
    from tests.support.git_repos import repo_with_commits

    cache, shas = repo_with_commits(
        tmp_path,
        [
            {"pyproject.toml": f'[project]\nname = "r"\nversion = "1"\ndependencies = {deps}\n'}
            for deps in ('["attrs"]', '["attrs", "httpx"]')
        ],
    )
    environments = Environments(docker_client, cache, sandbox_config(build=True, image=BASE_IMAGE, network="none"))  # type: ignore[arg-type]
    recipe = EnvRecipe(
        ("grep -o httpx pyproject.toml > /opt/installed || echo none > /opt/installed",), PYTEST, BASE_IMAGE
    )
    tag = env_image_tag("o/r", recipe)

    def installed(image: str) -> str:
        return docker_client.containers.run(image, ["cat", "/opt/installed"], remove=True).decode().strip()  # type: ignore[attr-defined]

    made: list[str] = []
    try:
        seen = [environments.image("o/r", shas[i % 2], recipe) for i in range(4)]
        made = sorted({image for image, _ in seen})
        layer = seen[1][0]
        assert seen == [(tag, False), (layer, False), (tag, True), (layer, True)] and layer.startswith(f"{tag}-")
        assert (installed(tag), installed(layer)) == ("none", "httpx")
        images = {image: docker_client.images.get(image) for image in made}  # type: ignore[attr-defined]
        assert images[layer].labels["swe-forge.from"] == images[tag].id  # on top of the repository's image
        assert (environments.built_at(tag), environments.built_at(layer)) == (shas[0], shas[1])
        assert 0 <= (environments.own_bytes(layer) or 0) < 5_000_000  # the tree and the install's change only
        old_layer = images[layer].id
        docker_client.images.remove(tag, force=True)  # type: ignore[attr-defined]  # the repository's image is rebuilt
        assert environments.image("o/r", shas[0], recipe) == (tag, False)
        assert environments.image("o/r", shas[1], recipe) == (layer, False)  # over the new image
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(old_layer)  # type: ignore[attr-defined]  # the replaced layer is gone
        assert images[layer].labels[BUILT_AT_LABEL] == shas[1]
    finally:
        for image in made or [tag]:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(image, force=True)  # type: ignore[attr-defined]


@pytest.mark.docker
def test_runs_keep_what_the_install_made_and_keep_it_out_of_git(tmp_path: Path, docker_client: object) -> None:
    """An install's outputs (a src/ layout's egg-info, a generated version file) survive into every run at
    another commit, are in no commit and no diff; the build tree's record is gone from the container."""
    import docker

    from swe_forge_dagster.environments.environment import Environments
    from swe_forge_dagster.execution.repo_box import exec_checked, start_repo_box, write_tree_archive
    from tests.support.common import BASE_IMAGE
    from tests.support.git_repos import repo_with_commits

    cache, shas = repo_with_commits(
        tmp_path, [{".gitignore": "*.egg-info/\n", "src/pkg/mod.py": "x = 1\n"}, {"src/pkg/mod.py": "x = 2\n"}]
    )
    install = "mkdir -p src/pkg.egg-info && echo meta > src/pkg.egg-info/PKG-INFO && echo v=1 > src/pkg/_version.py"
    recipe = EnvRecipe((install,), PYTEST, BASE_IMAGE)
    environments = Environments(docker_client, cache, sandbox_config(build=True, image=BASE_IMAGE, network="none"))  # type: ignore[arg-type]
    image, _ = environments.image("o/r", shas[0], recipe)
    try:
        archive = write_tree_archive(cache, "o/r", shas[1], tmp_path / "tree.tar")
        config = sandbox_config(build=True, image=image, network="none")
        box, _sha = start_repo_box(docker_client, config, archive, name_hint="outputs")  # type: ignore[arg-type]
        with box:
            script = (
                "cd /repo && cat src/pkg/mod.py src/pkg/_version.py src/pkg.egg-info/PKG-INFO "
                "&& git status --porcelain && git ls-files && ls /.swe-forge-env 2>&1 || true"
            )
            seen = exec_checked(box, ["bash", "-c", script], "looking")
        assert seen.splitlines()[:3] == ["x = 2", "v=1", "meta"]  # the commit under test, the install's outputs
        assert seen.splitlines()[3:5] == [".gitignore", "src/pkg/mod.py"]  # clean status; the tree only in git
        assert "No such file" in seen  # no record of the build tree left for an agent to read
        # the agents' sandboxes (test writer, its checks) are prepared the same way from a host tree
        from swe_forge_dagster.tasks.agents import prepared_box

        tree = environments.export_tree("o/r", shas[1], tmp_path / "host-tree")
        with prepared_box(docker_client, config, tree, "agent-tree") as agent_box:  # type: ignore[arg-type]
            seen = exec_checked(agent_box, ["bash", "-c", script], "looking")
        assert seen.splitlines()[:5] == ["x = 2", "v=1", "meta", ".gitignore", "src/pkg/mod.py"]
        # a git worktree as the host tree: its `.git` pointer file names a host path, which is not taken along
        with cache.worktree("o/r", shas[1]) as linked:
            assert (linked / ".git").is_file()
            with prepared_box(docker_client, config, linked, "agent-tree") as agent_box:  # type: ignore[arg-type]
                seen = exec_checked(agent_box, ["bash", "-c", script], "looking")
        assert seen.splitlines()[:5] == ["x = 2", "v=1", "meta", ".gitignore", "src/pkg/mod.py"]
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(image, force=True)  # type: ignore[attr-defined]
