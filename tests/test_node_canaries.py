"""Canaries for mocha, jest and vitest (`languages.node_canaries`): where they are planted, how they assert, how a
report is judged with them, and the anchored selectors of the seed-format commands. Real mocha runs with them (the
real axios task and the red team that patches mocha or rewrites its report) are in `tests/test_real_multilingual.py`.
"""

from __future__ import annotations

import random

from swe_forge_dagster.execution.languages.node_canaries import NodeCanaries, plant_node
from swe_forge_dagster.execution.languages.registry import runner_of

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


def test_canaries_go_in_the_file_of_a_fail_to_pass_test_and_assert_as_it_does() -> None:
    cases = [
        (MOCHA_FILE, ["issues 5028 should handle set-cookie headers as an array"], "it(", "assert.strictEqual(String("),
        (JEST_FILE, ["parse > keeps the order of values"], "test(", "expect(String("),
        (CHAI_FILE, ["adds two numbers"], "it(", ").to.equal(String("),
        (PLAIN_FILE, ["works without an assertion library"], "it(", "throw new Error("),
    ]
    for text, fail_to_pass, function, assertion in cases:
        for seed in range(10):
            canaries = plant(text, fail_to_pass, seed)
            assert canaries is not None and canaries.path == "test/b.js"
            added = canaries.content.decode().removeprefix(text)
            assert added.count(f"\n{function}") == 2 and added.count(assertion) == 2, added
            assert canaries.passing != canaries.failing
            for title in (canaries.passing, canaries.failing):
                assert f"'{title}'" not in text and f'"{title}"' not in text and f"`{title}`" not in text
    jest = plant(JEST_FILE, ["parse > keeps the order of values"])
    assert jest is not None and ".toBe(String(" in jest.content.decode()  # jest's matcher, not chai's


def test_no_canaries_when_no_file_holds_a_fail_to_pass_title() -> None:
    assert plant(MOCHA_FILE, ["something else entirely"]) is None


def test_a_report_is_judged_by_the_planted_outcomes() -> None:
    canaries = plant(MOCHA_FILE, ["issues 5028 should handle set-cookie headers as an array"])
    assert canaries is not None
    task = "issues 5028 should handle set-cookie headers as an array"
    honest = {task: "passed", canaries.passing: "passed", canaries.failing: "failed"}
    assert canaries.expected(honest) and canaries.tampering(honest, 1, False) is None
    assert canaries.twin_ran(honest) is None and canaries.without_twin() is canaries
    assert "planted to fail" in (canaries.tampering(dict.fromkeys(honest, "passed"), 0, False) or "")
    assert "missing" in (canaries.tampering({task: "passed"}, 0, False) or "")
    assert canaries.tampering({}, 1, False) is None  # nothing ran: the task's tests say so
    vitest = {f"test/b.js > {title}": outcome for title, outcome in honest.items()}  # vitest ids start with the file
    assert canaries.expected(vitest) and canaries.tampering(vitest, 1, False) is None


def test_seed_format_commands_select_exactly_one_test() -> None:
    mocha = runner_of("npx --no-install mocha --exit {tests}")
    assert mocha.single_test("issues 5028 handles (x)", ["test/b.js"]) == (
        "npx --no-install mocha --exit --grep '^issues 5028 handles \\(x\\)$' test/b.js"
    )
    jest = runner_of("npx --no-install jest --ci {tests}")
    assert (
        jest.single_test("parse > keeps order", ["t/a.test.js"])
        == "npx --no-install jest --ci -t '^parse keeps order$' t/a.test.js"
    )
    vitest = runner_of("npx --no-install vitest run {tests}")
    assert vitest.single_test("t/a.test.ts > parse > keeps order", ["t/a.test.ts"]).endswith(
        "-t '^parse keeps order$' t/a.test.ts"
    )
