"""Canaries for mocha, jest and vitest (`languages.node.canaries`): where they are planted, how they assert, how a
report is judged with them, and the anchored selectors of the seed-format commands. Real mocha runs with them (the
real axios task and the red team that patches mocha or rewrites its report) are in `tests/test_real_multilingual.py`.
"""

from __future__ import annotations

import random
import re

from swe_forge_dagster.languages.node.canaries import NodeCanaries, plant_node
from swe_forge_dagster.languages.registry import runner_of

MOCHA_FILE = """import assert from 'assert';
import axios from '../../../index.js';

describe('issues', function () {
  describe('5028', function () {
    it('should handle set-cookie headers as an array', async function () {
      assert.strictEqual(1, 1);
    });
  });
  it("should not fail with query parsing", () => {});
});
"""
JEST_FILE = """const { parse } = require('../src/parse');

describe('parse', () => {
  test('returns an empty list for empty input', () => {
    expect(parse('')).toEqual([]);
  });
  test(`keeps the order of values`, () => {
    expect(parse('a,b')).toEqual(['a', 'b']);
  });
});
"""
CHAI_FILE = "const { expect } = require('chai');\n\nit('adds two numbers', () => { expect(1).to.equal(1); });\n"
PLAIN_FILE = "it('works without an assertion library', function () {});\n"


def plant(text: str, fail_to_pass: list[str], seed: int = 0) -> NodeCanaries | None:
    files = {"test/a.js": b"// helpers only\n", "test/b.js": text.encode()}
    return plant_node(list(files), fail_to_pass, files.__getitem__, random.Random(seed))


def test_canaries_sit_beside_the_fail_to_pass_test_and_its_twin_takes_its_place_in_the_run_apart() -> None:
    cases = [  # the file, a test, its call, how the file asserts, the twin's changed assertion (None: opened)
        (
            MOCHA_FILE,
            "issues 5028 should handle set-cookie headers as an array",
            "it",
            "assert.strictEqual(String(",
            r"assert\.strictEqual\(1, (?!1\))\d+\);",
        ),
        (
            JEST_FILE,
            "keeps the order of values",
            "test",
            "expect(String(",
            re.escape("expect(parse('a,b')).not.toEqual(['a', 'b']);"),
        ),
        (CHAI_FILE, "adds two numbers", "it", ").to.equal(String(", r"expect\(1\)\.to\.equal\((?!1\))\d+\);"),
        (PLAIN_FILE, "works without an assertion library", "it", "throw new Error(", None),
    ]
    for text, test_id, function, assertion, changed in cases:
        for seed in range(10):
            canaries = plant(text, [test_id], seed)
            assert canaries is not None and canaries.path == "test/b.js" and canaries.original == test_id
            planted = canaries.content.decode()
            assert planted.count(f"{function}(") == text.count(f"{function}(") + 2, planted
            assert planted.count(assertion) == text.count(assertion) + 2
            titles = (canaries.passing, canaries.failing)
            assert len(set(titles)) == 2 and all(t and "#" not in t for t in titles)
            for title in titles:
                assert f"'{title}'" not in text and f'"{title}"' not in text and f"`{title}`" not in text
                assert canaries.prefix is not None and canaries.prefix + title != test_id
            # planted right after the test's own call: before anything that followed it in the file
            original_end = text.index("});", text.index(test_id.rsplit(" ", 1)[-1])) + 3
            assert planted.startswith(text[:original_end]) and planted.endswith(text[original_end:])
            apart = canaries.apart()  # the run apart: the same planted tests, the test's own call as its twin
            assert apart is not None and apart.files().keys() == {"test/b.js"} and apart.apart() is None
            twin_file = apart.content.decode()
            start = text.index(test_id.rsplit(" ", 1)[-1]) - len(f"{function}('")
            assert twin_file.startswith(text[:start]) and twin_file.endswith(text[original_end:])  # in its place
            assert twin_file.count(f"{function}(") == planted.count(f"{function}(")  # no test added: a twin
            assert changed is None or len(re.findall(changed, twin_file)) == 1
            assert changed is not None or twin_file.count(assertion) == planted.count(assertion) + 1
            rest = [line for line in twin_file.splitlines() if line not in planted.splitlines()]
            assert len(rest) == 1 or changed is None, rest  # one line differs: the changed assertion
    mocha = plant(MOCHA_FILE, ["issues 5028 should handle set-cookie headers as an array"])
    assert mocha is not None and mocha.prefix == "issues 5028 " and mocha.without_twin().apart() is None


def test_a_fixture_or_a_title_that_only_ends_like_the_test_does_not_host_them() -> None:
    fixture = {"test/fixtures/pass.js": b"it('should pass', () => {});\n"}
    assert plant_node(list(fixture), ["runner reports the fixture xshould pass"], fixture.__getitem__) is None


def test_no_canaries_when_no_file_holds_a_fail_to_pass_title() -> None:
    assert plant(MOCHA_FILE, ["something else entirely"]) is None


def test_a_report_is_judged_by_the_planted_outcomes_and_the_twin_by_the_run_apart() -> None:
    task = "issues 5028 should handle set-cookie headers as an array"
    canaries = plant(MOCHA_FILE, [task])
    assert canaries is not None and canaries.prefix is not None
    ids = {name: canaries.prefix + title for name, title in (("p", canaries.passing), ("f", canaries.failing))}
    honest = {task: "passed", ids["p"]: "passed", ids["f"]: "failed"}
    assert (
        canaries.expected(honest) and canaries.twin_ran(honest) is None and canaries.tampering(honest, 1, False) is None
    )
    assert "planted to fail" in (canaries.tampering({**honest, ids["f"]: "passed"}, 0, False) or "")
    assert "missing" in (canaries.tampering({k: v for k, v in honest.items() if k != ids["f"]}, 0, False) or "")
    assert canaries.tampering({}, 1, False) is None  # nothing ran: the task's tests say so
    apart = {**honest, task: "failed"}
    assert canaries.apart_tampering(honest, apart) is None  # the twin fails where the test passes
    assert "so did its twin" in (canaries.apart_tampering(honest, honest) or "")
    assert "missing" in (canaries.apart_tampering(honest, {k: v for k, v in apart.items() if k != task}) or "")
    assert canaries.apart_tampering(honest, None) is None  # no report: no verdict (`harness.verify`), no claim
    assert canaries.apart_tampering({**honest, task: "failed"}, honest) is None  # not fixed: no claim
    top = plant_node(["a.js"], ["lone test"], {"a.js": b"it('lone test', () => { x(/[(]/); });\n"}.get)
    assert top is not None and top.prefix is None and top.apart() is None  # the call's end is not found: top level
    vitest = {f"a.js > {top.passing}": "passed", f"a.js > {top.failing}": "failed", "a.js > lone test": "passed"}
    assert top.expected(vitest) and top.tampering(vitest, 1, False) is None


def test_seed_format_commands_select_exactly_one_test() -> None:
    mocha = runner_of("npx --no-install mocha --exit {tests}")
    assert mocha.single_test("issues 5028 handles (x)", ["test/b.js"]) == (
        "npx --no-install mocha --exit --grep '^issues 5028 handles \\(x\\)$' test/b.js"
    )
    jest = runner_of("npx --no-install jest --ci {tests}")
    assert (
        jest.single_test("keeps order", ["t/a.test.js"])
        == "npx --no-install jest --ci -t '(?:^| )keeps order$' t/a.test.js"
    )
    vitest = runner_of("npx --no-install vitest run {tests}")
    assert vitest.single_test("t/a.test.ts > parse > keeps order", ["t/a.test.ts"]).endswith(
        "-t '(?:^| )parse keeps order$' t/a.test.ts"
    )
