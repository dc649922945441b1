"""split_diff on real `git diff --binary --full-index` output from throwaway repositories.

The property that matters is that both halves apply at the base commit and together rebuild the head
tree exactly, so every test goes through real git rather than hand-written diffs where it can.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge_dagster.execution.patch import PatchApplyError, apply, check_applies, split_diff, split_sections
from swe_forge_dagster.languages.registry import is_test_path

Git = Callable[..., str]

# Realistic paths per language, with the half each must land in.
SOURCE_FILES = {
    "src/pkg/core.py": "def add(a, b):\n    return a + b\n",
    "web/src/util.ts": "export const two = 2;\n",
    "pkg/server/server.go": "package server\n\nfunc Port() int { return 80 }\n",
    "crates/core/src/lib.rs": "pub fn one() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n",
    "src/main/java/com/acme/Foo.java": "package com.acme;\nclass Foo {}\n",
}
TEST_FILES = {
    "tests/test_core.py": "from pkg.core import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "src/pkg/test_helpers.py": "def test_h():\n    pass\n",
    "src/pkg/core_test.py": "def test_c():\n    pass\n",
    "conftest.py": "import pytest\n",
    "web/src/__tests__/app.js": "test('a', () => {});\n",
    "web/src/util.test.ts": "test('two', () => {});\n",
    "web/src/button.spec.tsx": "it('renders', () => {});\n",
    "pkg/server/server_test.go": 'package server\n\nimport "testing"\n\nfunc TestPort(t *testing.T) {}\n',
    "crates/core/tests/integration.rs": "#[test]\nfn it_works() {}\n",
    "src/test/java/com/acme/FooTest.java": "package com.acme;\nclass FooTest {}\n",
}


@pytest.fixture
def git(tmp_path: Path) -> Git:
    """A git runner isolated from the machine's and user's config."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home), "LC_ALL": "C"}
    env.pop("GIT_DIR", None)

    def run(*args: str, cwd: Path, stdin: bytes | None = None) -> str:
        command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false", *args]
        result = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, check=True)
        return result.stdout.decode("utf-8", "surrogateescape")

    return run


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode())


def commit_all(git: Git, repo: Path, message: str) -> str:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


def diff(git: Git, repo: Path, base: str, head: str) -> str:
    return git("diff", "--binary", "--full-index", "-M", base, head, cwd=repo)


def checkout(git: Git, repo: Path, commit: str, dest: Path) -> Path:
    git("worktree", "add", "-q", "--detach", str(dest), commit, cwd=repo)
    return dest


def tree_of_worktree(git: Git, worktree: Path) -> str:
    git("add", "-A", cwd=worktree)
    return git("write-tree", cwd=worktree).strip()


@pytest.fixture
def pr_repo(tmp_path: Path, git: Git) -> tuple[Path, str, str]:
    """A repo whose head commit touches every kind of change git can express, in several languages."""
    rng = random.Random(7)
    big_blob = b"\x00" + bytes(rng.randrange(256) for _ in range(8192))
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    write(repo, SOURCE_FILES | TEST_FILES)
    write(
        repo,
        {
            "docs/logo.png": bytes(rng.randrange(256) for _ in range(300)),
            "assets/model.bin": big_blob,
            "src/pkg/old name.py": "".join(f"line = {i}\n" for i in range(30)),
            "tests/test_removed.py": "def test_gone():\n    pass\n",
            "tests/test_a.py": "".join(f"def test_{i}():\n    pass\n" for i in range(10)),
            "tests/helper.py": "".join(f"HELPER_{i} = {i}\n" for i in range(20)),
            "src/crlf.txt": "one\r\ntwo\r\nthree\r\n",
            "src/no_newline.py": "x = 1",
            "scripts/run.sh": "#!/bin/sh\necho hi\n",
            "src/café.py": "name = 'café'\n",
        },
    )
    base = commit_all(git, repo, "base")

    write(repo, {name: content + "# changed\n" for name, content in (SOURCE_FILES | TEST_FILES).items()})
    write(
        repo,
        {
            "docs/logo.png": bytes(rng.randrange(256) for _ in range(300)),
            "assets/new image.png": b"\x89PNG\r\n\x1a\n\x00" + bytes(rng.randrange(256) for _ in range(64)),
            "tests/fixtures/blob.bin": bytes(range(256)),
            "src/crlf.txt": "one\r\ntwo\r\n3\r\n",
            "src/no_newline.py": "x = 2",
            "tests/test with space.py": "def test_space():\n    pass\n",
            "src/café.py": "name = 'cafe'\n",
            "assets/model.bin": big_blob[:4000] + b"changed" + big_blob[4000:],  # small change: a binary delta
        },
    )
    (repo / "tests/test_removed.py").unlink()
    (repo / "src/pkg/old name.py").rename(repo / "src/pkg/new name.py")
    write(repo, {"src/pkg/new name.py": (repo / "src/pkg/new name.py").read_text().replace("= 3\n", "= 33\n")})
    (repo / "tests/test_a.py").rename(repo / "tests/test_b.py")
    (repo / "tests/helper.py").rename(repo / "src/helper.py")  # leaves the tests: now source
    (repo / "scripts/run.sh").chmod(0o755)
    os.symlink("core.py", repo / "src/pkg/link.py")
    head = commit_all(git, repo, "head")
    return repo, base, head


def test_split_classifies_every_language_and_change_kind(pr_repo: tuple[Path, str, str], git: Git) -> None:
    repo, base, head = pr_repo
    split = split_diff(diff(git, repo, base, head), is_test_path)

    expected_src = {
        *SOURCE_FILES,
        *("src/pkg/new name.py", "src/helper.py", "docs/logo.png", "assets/new image.png", "assets/model.bin"),
        *("src/crlf.txt", "src/no_newline.py", "scripts/run.sh", "src/café.py", "src/pkg/link.py"),
    }
    expected_test = {
        *TEST_FILES,
        *("tests/test_removed.py", "tests/test_b.py", "tests/fixtures/blob.bin", "tests/test with space.py"),
    }
    assert set(split.src_files) == expected_src
    assert set(split.test_files) == expected_test
    assert set(split.binary_files) == {
        "docs/logo.png",
        "assets/new image.png",
        "assets/model.bin",
        "tests/fixtures/blob.bin",
    }
    # Rust's in-file #[cfg(test)] module cannot be split off by path: the file is source.
    assert "crates/core/src/lib.rs" in split.src_files
    assert "GIT binary patch" in split.patch and "GIT binary patch" in split.test_patch
    assert "\ndelta " in split.patch and "\nliteral " in split.patch
    assert "similarity index 9" in split.patch  # the rename with an edit
    assert "\\ No newline at end of file" in split.patch
    assert "-three\r\n+3\r\n" in split.patch


def test_halves_apply_at_base_and_rebuild_head_exactly(
    pr_repo: tuple[Path, str, str], git: Git, tmp_path: Path
) -> None:
    repo, base, head = pr_repo
    split = split_diff(diff(git, repo, base, head), is_test_path)
    head_tree = git("rev-parse", f"{head}^{{tree}}", cwd=repo).strip()

    for order, name in (
        ((split.patch, split.test_patch), "fix-first"),
        ((split.test_patch, split.patch), "tests-first"),
    ):
        worktree = checkout(git, repo, base, tmp_path / name)
        assert check_applies(worktree, split.patch) is None
        assert check_applies(worktree, split.test_patch) is None
        for half in order:
            apply(worktree, half)
        assert tree_of_worktree(git, worktree) == head_tree


def test_sections_are_byte_exact(pr_repo: tuple[Path, str, str], git: Git) -> None:
    repo, base, head = pr_repo
    text = diff(git, repo, base, head)
    sections = split_sections(text)
    assert "".join(section.text for section in sections) == text
    split = split_diff(text, is_test_path)
    assert sorted([*split.patch.split("diff --git "), *split.test_patch.split("diff --git ")]) == sorted(
        ["", "", *text.split("diff --git ")[1:]]
    )


def make_repo(git: Git, root: Path, base_files: dict[str, str], head_files: dict[str, str]) -> tuple[Path, str, str]:
    root.mkdir()
    git("init", "-q", "-b", "main", cwd=root)
    write(root, base_files)
    base = commit_all(git, root, "base")
    write(root, head_files)
    return root, base, commit_all(git, root, "head")


def test_fix_without_tests_has_empty_test_patch(git: Git, tmp_path: Path) -> None:
    repo, base, head = make_repo(git, tmp_path / "r", {"lib/a.py": "a = 1\n"}, {"lib/a.py": "a = 2\n"})
    split = split_diff(diff(git, repo, base, head), is_test_path)
    assert split.test_patch == "" and split.test_files == []
    assert split.src_files == ["lib/a.py"]
    worktree = checkout(git, repo, base, tmp_path / "w")
    assert check_applies(worktree, split.test_patch) is None
    apply(worktree, split.test_patch)  # a no-op, not git's "No valid patches in input"
    assert check_applies(worktree, split.patch) is None


def test_tests_only_has_empty_patch(git: Git, tmp_path: Path) -> None:
    repo, base, head = make_repo(git, tmp_path / "r", {"tests/test_a.py": "x = 1\n"}, {"tests/test_a.py": "x = 2\n"})
    split = split_diff(diff(git, repo, base, head), is_test_path)
    assert split.patch == "" and split.src_files == []
    assert split.test_files == ["tests/test_a.py"]


def test_conflicting_patch_reports_git_error(git: Git, tmp_path: Path) -> None:
    repo, base, head = make_repo(git, tmp_path / "r", {"lib/a.py": "a = 1\n"}, {"lib/a.py": "a = 2\n"})
    split = split_diff(diff(git, repo, base, head), is_test_path)
    worktree = checkout(git, repo, base, tmp_path / "w")
    (worktree / "lib/a.py").write_text("a = 'something else'\n")

    error = check_applies(worktree, split.patch)
    assert error is not None
    assert "lib/a.py" in error and "patch does not apply" in error
    with pytest.raises(PatchApplyError, match="patch does not apply"):
        apply(worktree, split.patch)
    assert (worktree / "lib/a.py").read_text() == "a = 'something else'\n"  # untouched


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/unit/test_api.py", True),
        ("pkg/test_api.py", True),
        ("pkg/api_test.py", True),
        ("pkg/sub/conftest.py", True),
        ("pkg/api.py", False),
        ("packages/ui/src/__tests__/Button.tsx", True),
        ("packages/ui/src/Button.test.ts", True),
        ("packages/ui/src/Button.spec.tsx", True),
        ("packages/ui/src/Button.tsx", False),
        ("internal/http/server_test.go", True),
        ("internal/http/server.go", False),
        ("tokio/tests/io_read.rs", True),
        ("tokio/src/io/read.rs", False),  # may hold #[cfg(test)] mod tests: still source
        ("gson/src/test/java/com/google/gson/JsonWriterTest.java", True),
        ("gson/src/main/java/com/google/gson/JsonWriter.java", False),
    ],
)
def test_language_paths_land_in_the_right_half(path: str, is_test: bool) -> None:
    header = f"diff --git a/{path} b/{path}\nindex 0000000..1111111 100644\n"
    text = f"{header}--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    split = split_diff(text, is_test_path)
    assert (split.test_files, split.src_files) == (([path], []) if is_test else ([], [path]))
    assert (split.test_patch if is_test else split.patch) == text


def test_header_edge_cases() -> None:
    text = (
        'diff --git "a/tests/caf\\303\\251 \\"x\\".py" "b/tests/caf\\303\\251 \\"x\\".py"\n'
        "new file mode 100644\nindex 0000000..e69de29\n"
        "diff --git a/src/my file.sh b/src/my file.sh\nold mode 100644\nnew mode 100755\n"
        "diff --git a/src/gone.py b/src/gone.py\ndeleted file mode 100644\nindex 1111111..0000000\n"
        "--- a/src/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-+++ b/not/a/header.py\n"
        "diff --git a/img.png b/img.png\nindex 1111111..2222222 100644\nBinary files a/img.png and b/img.png differ\n"
        "diff --git a/tests/a b.py b/src/a b.py\nsimilarity index 100%\nrename from tests/a b.py\nrename to src/a b.py"
    )
    sections = split_sections(text)
    assert [s.path for s in sections] == ['tests/café "x".py', "src/my file.sh", "src/gone.py", "img.png", "src/a b.py"]
    assert sections[-1].old_path == "tests/a b.py"
    assert sections[-1].text.endswith("rename to src/a b.py\n")  # a stripped diff gets its last newline back
    assert [s.is_binary for s in sections] == [False, False, False, True, False]
    assert split_diff(text, is_test_path).test_files == ['tests/café "x".py']


def test_not_a_git_diff_is_an_error() -> None:
    assert split_diff("", is_test_path).patch == ""
    with pytest.raises(ValueError, match="not a git diff"):
        split_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n", is_test_path)


def test_real_swebench_patches_split_byte_exactly(shared_fixtures: Path) -> None:
    """On real SWE-bench diffs: sections rebuild the input, and compare with SWE-bench's own split."""
    path = shared_fixtures / "swebench" / "lite-test-and-multilingual" / "swebench_lite_origin.jsonl"
    if not path.is_file():
        pytest.skip(f"SWE-bench Lite fixture missing at {path}")
    agree = total = 0
    for line in path.read_text().splitlines():
        instance = json.loads(line)
        for text in (instance["patch"], instance["test_patch"]):
            assert "".join(s.text for s in split_sections(text)) == text
        split = split_diff(instance["patch"] + instance["test_patch"], is_test_path)
        total += 1
        agree += split.patch == instance["patch"] and split.test_patch == instance["test_patch"]
    print(f"SWE-bench Lite: {agree}/{total} instances split exactly like SWE-bench")
    assert (agree, total) == (300, 300)
