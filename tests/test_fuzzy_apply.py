"""A prediction `git apply` refuses is applied as `swebench eval` applies it: GNU patch's `--fuzz=5`, last.

SWE-bench's harness falls back to `patch --batch --forward --fuzz=5 -p1` (`run_evaluation.GIT_APPLY_CMDS`), so a
model's patch whose line numbers and context drifted is resolved there; ours called it unresolved. These tests run
`protection.apply_agent_diff` in a real container: a drifted patch is placed as GNU patch places it, what it changes
is still judged on the applied tree (a protected file it touches is reset), and what neither places is refused with
both tools' reasons. GNU patch never reads the agent's text as an ed script nor writes outside its copy.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.execution.repo_box import PatchRejected
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig
from swe_forge_dagster.harness.fuzzy_apply import FuzzRefused, fuzzed_diff
from swe_forge_dagster.harness.protection import apply_agent_diff
from tests.support.common import BASE_IMAGE

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed on this host")

LINES = [f"def f{i}(x):\n    return x + {i}\n\n" for i in range(12)]
SETUP = """set -e
mkdir -p /repo && cd /repo && git init -q
cat > calc.py
printf 'import pytest\\n' > conftest.py
git add -A && git -c user.name=t -c user.email=t@t commit -qm base
"""
# Written against a calc.py four lines shorter, whose f3 and f5 read otherwise: `git apply` refuses it (context),
# GNU patch places it with fuzz 2 and an offset of 4 lines.
DRIFTED = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -6,8 +6,8 @@ def f1(x):
 def f3_renamed(x):
     return x + 3

 def f4(x):
-    return x + 4
+    return x - 4

 def f5(x):
     return x + 5 + 0
"""
CONFTEST = """diff --git a/conftest.py b/conftest.py
--- a/conftest.py
+++ b/conftest.py
@@ -1 +1,2 @@
 import pytest
+pytest.main = None
"""
HOPELESS = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1 @@
-nothing like this
-is in the file
+at all
"""


@pytest.fixture
def repo_box(docker_client: docker.DockerClient) -> Iterator[Sandbox]:
    config = SandboxConfig(image=BASE_IMAGE, mem_limit="256m", network="none")
    with Sandbox.start(docker_client, config, name_hint="test-fuzzy-apply") as box:
        script = SETUP.replace("cat > calc.py", f"printf %s {_quoted(''.join(LINES))} > calc.py")
        result = box.run(script)
        assert result.ok, result
        yield box


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.mark.docker
def test_a_drifted_patch_is_placed_as_gnu_patch_places_it_and_still_judged_on_the_applied_tree(
    repo_box: Sandbox,
) -> None:
    assert not repo_box.run("cd /repo && git apply --check - <<'EOF'\n" + DRIFTED + "EOF").ok  # git alone refuses
    reset = apply_agent_diff(repo_box, DRIFTED + CONFTEST, task_files=())
    assert reset == ["conftest.py"]  # the fuzzed result went through the same defences
    calc = repo_box.read_file("/repo/calc.py").decode()
    assert "    return x - 4\n" in calc and "    return x + 4\n" not in calc and "return x + 5\n" in calc
    assert repo_box.read_file("/repo/conftest.py") == b"import pytest\n"
    assert repo_box.run("cd /repo && ls calc.py.orig calc.py.rej").exit_code != 0  # no backups, no rejects


@pytest.mark.docker
def test_a_patch_neither_tool_places_is_refused_with_both_reasons(repo_box: Sandbox) -> None:
    with pytest.raises(PatchRejected) as refused:
        apply_agent_diff(repo_box, HOPELESS, task_files=())
    assert "patch does not apply" in str(refused.value) and "patch --fuzz=5" in str(refused.value)
    assert repo_box.run("cd /repo && git status --porcelain").output.strip() == ""


@pytest.mark.docker
def test_gnu_patch_is_confined_to_its_copy(repo_box: Sandbox, tmp_path: Path) -> None:
    escape = DRIFTED.replace("+++ b/calc.py", "+++ b/../../../../tmp/owned.py")
    with pytest.raises(FuzzRefused):
        fuzzed_diff(repo_box, escape.replace("diff --git a/calc.py b/calc.py", "diff --git a/../x b/../x"))
    ed_script = "diff --git a/calc.py b/calc.py\n1a\n!touch /tmp/swe-forge-ed-ran\n.\nw\nq\n"
    with pytest.raises(FuzzRefused):
        fuzzed_diff(repo_box, ed_script)
    outside = DRIFTED.replace("+++ b/calc.py", f"+++ b/../../../..{tmp_path}/owned.py")
    with pytest.raises(FuzzRefused):
        fuzzed_diff(repo_box, outside)
    assert not (tmp_path / "owned.py").exists()
    assert not Path("/tmp/swe-forge-ed-ran").exists()


@pytest.mark.docker
def test_what_the_sections_do_not_name_never_reaches_the_tree(repo_box: Sandbox) -> None:
    """A file header hidden in a hunk's body, a `.git` or a folder path, planted attributes: refused or inert."""
    hidden = DRIFTED.rstrip("\n") + "\n--- a/smuggled.py\n+++ b/smuggled.py\n@@ -0,0 +1 @@\n+import os\n"
    with pytest.raises(FuzzRefused, match=r"smuggled\.py"):
        fuzzed_diff(repo_box, hidden)
    dot_git = DRIFTED.replace("calc.py", "sub/.git")
    with pytest.raises(FuzzRefused, match=r"\.git"):
        fuzzed_diff(repo_box, dot_git)
    folder = DRIFTED.replace("calc.py", ".")
    with pytest.raises(FuzzRefused, match="unsafe path"):
        fuzzed_diff(repo_box, folder)
    attributes = (
        "diff --git a/.gitattributes b/.gitattributes\nnew file mode 100644\n--- /dev/null\n+++ b/.gitattributes\n"
        "@@ -0,0 +1 @@\n+* ident working-tree-encoding=UTF-16\n"
    )
    exact = fuzzed_diff(repo_box, attributes + DRIFTED)  # git on the copy reads no attribute the diff plants
    assert "+    return x - 4" in exact and "+* ident working-tree-encoding=UTF-16" in exact
