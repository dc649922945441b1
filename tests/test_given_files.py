"""The test files a dataset row is re-proven on: those that host its given ids (`tasks.given_files`)."""

from __future__ import annotations

import json

import pytest

from swe_forge_dagster.tasks.given_files import files_of_given_ids, literals
from tests.support.common import SHARED_FIXTURES

MULTI = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_multi.jsonl"
BUGS_AT_BASE = """import assert from 'assert';
import axios from '../../../index.js';

describe('issues', function () {
  describe('4999', function () {
    it('should not fail with query parsing', async function () {
"""


def test_axios_5085_is_proven_on_the_file_its_lists_come_from() -> None:
    """SWE-bench Multilingual lists only `bugs.js` tests; the test patch also adds one to `AxiosHeaders.js`."""
    if not MULTI.is_file():
        pytest.skip(f"real fixture missing ({MULTI.name})")
    row = next(
        r for line in MULTI.read_text().splitlines() if (r := json.loads(line))["instance_id"] == "axios__axios-5085"
    )
    added = {  # each file's added lines, as `revalidate_instances` reads them after its base text
        path: "\n".join(line[1:] for line in part.splitlines() if line.startswith("+"))
        for path, part in zip(
            ["test/unit/core/AxiosHeaders.js", "test/unit/regression/bugs.js"],
            row["test_patch"].split("diff --git ")[1:],
            strict=True,
        )
    }
    texts = {"test/unit/regression/bugs.js": BUGS_AT_BASE + added["test/unit/regression/bugs.js"]}
    texts["test/unit/core/AxiosHeaders.js"] = (
        "describe('AxiosHeaders', function () {\n" + added["test/unit/core/AxiosHeaders.js"]
    )
    ids = [*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"]]
    assert files_of_given_ids(list(texts), ids, texts.__getitem__) == ["test/unit/regression/bugs.js"]


def test_path_ids_name_their_files_and_an_unhosted_id_keeps_every_file() -> None:
    files = ["tests/conftest.py", "tests/test_a.py", "tests/test_b.py"]
    empty = {f: "" for f in files}.__getitem__
    assert files_of_given_ids(files, ["tests/test_a.py::test_x[1-2]"], empty) == ["tests/test_a.py"]
    # an id read from no file (a django label, a Go test name): the dataset's files are unknown, every one runs
    assert files_of_given_ids(files, ["tests/test_a.py::test_x", "test_y (app.tests.T)"], empty) == files
    assert files_of_given_ids(files, ["TestParse/empty"], empty) == files
    assert files_of_given_ids(files, [], empty) == files


def test_a_title_is_hosted_by_the_file_whose_literal_ends_it() -> None:
    texts = {
        "a.test.js": "describe(\"parser\", () => { test(`reads numbers`, () => {}); it('doesn\\'t crash', f) })",
        "b.test.js": "it('reads numbers twice', () => {}); it('a', f)",
    }
    assert {"parser", "reads numbers", "doesn't crash"} <= literals(texts["a.test.js"])
    assert "a" not in literals(texts["b.test.js"])  # too short to say where a test is
    pick = texts.__getitem__
    assert files_of_given_ids(list(texts), ["parser reads numbers"], pick) == ["a.test.js"]
    assert files_of_given_ids(list(texts), ["parser doesn't crash", "x > reads numbers twice"], pick) == list(texts)
    # a suffix inside a word is not a title: `...sreads numbers` is hosted by no file, so every file runs
    assert files_of_given_ids(list(texts), ["parsersreads numbers"], pick) == list(texts)


def test_a_template_literal_with_an_expression_hides_no_title_after_it() -> None:
    text = "const u = `${base}/x`;\nit('does a thing', () => {});\nconst y = `abcd`;\n"
    assert {"does a thing", "abcd"} <= literals(text) and not any("${" in value for value in literals(text))
