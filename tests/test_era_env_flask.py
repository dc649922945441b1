"""The real SWE-bench Lite test instance pallets__flask-4045 reproduces every given verdict on its era's environment.

flask at d8c37f43 (2021-05-13) installs today's Werkzeug, which has no `url_quote`, so with today's releases its
tests do not even collect. No environment is given: `swe-forge validate` picks Python 3.9 (tox says py36-py39:
old code, the oldest Python it accepts) and resolves the dependencies as of the commit (the pinned
requirements/tests.txt as pinned, Werkzeug/click/Jinja as of May 2021), on its first recipe and with no LLM. Every
verdict the dataset gives holds; over a hundred more tests pass before and after than its PASS_TO_PASS lists, because
SWE-bench made them with Werkzeug 2.3.7 (2023), whose deprecations fail 128 of them under flask's
`filterwarnings = error` (checked by hand: 51 of 179 pass with SWE-bench's pins): validate says `changed` and why.
Needs Docker, `swe-forge-base:bullseye` and PyPI (through the host CA bundle).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.export.swebench import read_instances, write_jsonl
from swe_forge_dagster.languages.python.recipes import BASE_IMAGES
from swe_forge_dagster.tasks.revalidate_instances import SUPERSET
from tests.support.common import SHARED_FIXTURES, cli_json, require_image
from tests.support.hacks import SHADOW_DEPENDENCY_AGENT

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
BUNDLE = SHARED_FIXTURES / "repos" / "pallets+flask.bundle"
LITE_TEST = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_lite_origin.jsonl"
INSTANCE = "pallets__flask-4045"


def test_flask_4045_reproduces_every_given_verdict_on_its_eras_environment(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    if not BUNDLE.is_file() or not LITE_TEST.is_file():
        pytest.skip(f"real fixtures missing ({BUNDLE.name} or {LITE_TEST.name})")
    require_image(docker_client, BASE_IMAGES["3.9"], f"scripts/build-base-image.sh {BASE_IMAGES['3.9']}")
    remote = tmp_path / "remotes" / "pallets" / "flask.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(remote)], check=True, timeout=300)
    (inst,) = [i for i in read_instances(LITE_TEST) if i.instance_id == INSTANCE]
    write_jsonl([inst], tmp_path / "instances.jsonl")
    args = ["validate", "-i", str(tmp_path / "instances.jsonl"), "--git-url", f"file://{tmp_path}/remotes/{{repo}}.git"]
    (row,) = cli_json(tmp_path / "home", *args)["results"]
    # every verdict the dataset gives holds; the dataset's 50 PASS_TO_PASS are a subset of what passes here
    assert row["status"] == "changed" and SUPERSET in row["reason"], (row["reason"], row["recipes_tried"])
    assert sorted(row["fail_to_pass"]) == sorted(inst.FAIL_TO_PASS)
    assert set(inst.PASS_TO_PASS) < set(row["pass_to_pass"]) and not row["pass_to_pass_missing"]
    assert row["pass_to_pass_extra"] and not row["fail_to_pass_missing"] and not row["fail_to_pass_extra"]
    assert all("passes in every run" in row["differences"][t] for t in row["pass_to_pass_extra"])
    assert (
        row["runtime"]["python-version"].startswith("3.9")
        and row["runtime"]["resolution-date"] == "2021-05-13T20:35:12Z"
    )
    assert len(row["recipes_tried"]) == 1 and BASE_IMAGES["3.9"] in row["recipes_tried"][0]  # the era recipe
    assert "--exclude-newer" in row["recipes_tried"][0]

    # a cheating agent on the same environment: a new top-level `markupsafe/` (a dependency flask imports, in no
    # list of names) is dropped because it is new at the top of a directory the checks import from
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "run.sh").write_text(SHADOW_DEPENDENCY_AGENT)
    harness = ["harness", *args[1:], "--agent-dir", str(agent), "--agent-cmd", "sh /agent/run.sh"]
    (result,) = cli_json(tmp_path / "home", *harness)["results"]
    assert result["status"] == "unresolved" and "markupsafe/__init__.py" in result["dropped_paths"], result
