"""The world's JavaScript repository: a tiny npm package with mocha tests and a merged bug fix.

`initech/slug-lite` turns titles into URL slugs. Its `slugify` splits on anything that is not
`[a-z0-9]`, so accented letters are cut out of the words (`Crème Brûlée` -> `cr-me-br-l-e`);
PR #4 (closing issue #3) folds accents first (NFKD, combining marks dropped) and adds mocha tests:
two that fail before the fix and pass after it (FAIL_TO_PASS, as mocha full titles, the ids
SWE-bench Multilingual uses), one new test that passes both times, and the four old ones
(PASS_TO_PASS). `package.json` declares mocha in `devDependencies` and `"test": "mocha"`, and the
repository commits the `package-lock.json` npm 9 (Node 18, `swe-forge-node:bookworm`) wrote for it,
so the manifest recipe is `npm ci`: the same mocha on every machine. The lock file is stored
compact beside this module and written back as npm writes it (2-space JSON, final newline).

The repository is in the demo's world only (`build_git_world(javascript=True)`): its task needs
the Node toolchain image and the npm registry, which the Python world's tests do not.
"""

from __future__ import annotations

import json
from pathlib import Path

from swe_forge_dagster.demo.worlds.git_world_specs import _PR, WorldComment, WorldIssue, _Commit, _edit, _files

JS_REPO = "initech/slug-lite"
_LOCK = json.loads((Path(__file__).with_name("slug_lite.package-lock.json")).read_text())
_PACKAGE = {
    "name": "slug-lite",
    "version": "1.2.0",
    "description": "URL slugs from titles, no dependencies.",
    "main": "lib/slugify.js",
    "scripts": {"test": "mocha"},
    "license": "MIT",
    "devDependencies": {"mocha": "^10.2.0"},
}


def _npm_json(value: dict) -> str:
    """JSON as npm writes package.json and package-lock.json: 2-space indent, final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


_SLUG_LITE = _files(r"""
=== .gitignore
node_modules/
=== README.md
# slug-lite

URL slugs from titles, no dependencies: `slugify('Hello World') === 'hello-world'`.
=== lib/slugify.js
'use strict';

/**
 * Turn a title into a URL slug: its lower-case words joined by `separator`.
 * @param {string} text
 * @param {string} [separator='-']
 * @returns {string}
 */
function slugify(text, separator = '-') {
  const words = String(text)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.join(separator);
}

module.exports = { slugify };
=== test/slugify.test.js
'use strict';

const assert = require('assert');
const { slugify } = require('../lib/slugify');

describe('slugify', function () {
  it('joins lower-case words with dashes', function () {
    assert.strictEqual(slugify('Hello World'), 'hello-world');
  });

  it('drops punctuation and extra spaces', function () {
    assert.strictEqual(slugify('  Hello,   World!  '), 'hello-world');
  });

  it('keeps digits', function () {
    assert.strictEqual(slugify('Top 10 tips'), 'top-10-tips');
  });

  it('uses the separator it is given', function () {
    assert.strictEqual(slugify('Hello World', '_'), 'hello_world');
  });
});
""")
_SLUG_LITE.update({"package.json": _npm_json(_PACKAGE), "package-lock.json": _npm_json(_LOCK)})
_FOLD_ACCENTS = _edit(
    _SLUG_LITE["lib/slugify.js"],
    (
        " * Turn a title into a URL slug: its lower-case words joined by `separator`.\n",
        " * Turn a title into a URL slug: its lower-case words joined by `separator`.\n"
        " * Accented letters become their base letter (`Crème` -> `creme`).\n",
    ),
    (
        "  const words = String(text)\n",
        "  const words = String(text)\n    .normalize('NFKD')\n    .replace(/[\\u0300-\\u036f]/g, '')\n",
    ),
)
_ACCENT_TESTS = _edit(
    _SLUG_LITE["test/slugify.test.js"],
    (
        "    assert.strictEqual(slugify('Hello World', '_'), 'hello_world');\n  });\n",
        "    assert.strictEqual(slugify('Hello World', '_'), 'hello_world');\n  });\n\n"
        "  it('leaves a slug as it is', function () {\n"
        "    assert.strictEqual(slugify('already-a-slug'), 'already-a-slug');\n  });\n\n"
        "  describe('accented titles', function () {\n"
        "    it('folds letters to their base letter', function () {\n"
        "      assert.strictEqual(slugify('Crème Brûlée'), 'creme-brulee');\n    });\n\n"
        "    it('folds them with a custom separator too', function () {\n"
        "      assert.strictEqual(slugify('Ça va, Zoë?', '_'), 'ca_va_zoe');\n    });\n  });\n",
    ),
)

JS_SPECS: dict[str, tuple[_Commit | _PR, ...]] = {
    JS_REPO: (
        _Commit("Initial commit", _SLUG_LITE),
        _PR(
            4,
            "Fold accents before slugifying",
            "Fixes #3.\n\n`slugify` split titles on anything outside `[a-z0-9]`, so accented letters were cut out "
            "of their words. Decompose the text (NFKD) and drop the combining marks first, so `Crème Brûlée` "
            "becomes `creme-brulee`.",
            "fold-accents",
            (
                _Commit("Fold accents before slugifying", {"lib/slugify.js": _FOLD_ACCENTS}),
                _Commit("Test accented titles", {"test/slugify.test.js": _ACCENT_TESTS}),
            ),
            fail_to_pass=(
                "slugify accented titles folds letters to their base letter",
                "slugify accented titles folds them with a custom separator too",
            ),
            pass_to_pass=(
                "slugify drops punctuation and extra spaces",
                "slugify joins lower-case words with dashes",
                "slugify keeps digits",
                "slugify leaves a slug as it is",
                "slugify uses the separator it is given",
            ),
            issue=WorldIssue(
                3,
                "slugify mangles accented letters",
                "`slugify('Crème Brûlée')` returns `cr-me-br-l-e`; I expected `creme-brulee`. Every title with "
                "an accent (`Ça va` -> `a-va`) loses letters, which breaks our French and German URLs.",
                comments=(WorldComment("Same for `Zoë`: it becomes `zo`.", hours=-5),),
            ),
        ),
    ),
}
