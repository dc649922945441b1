"""The split of a PR into its fix and its tests (`registry.is_test_path`): the generic rules (`common.paths`) and
every pack's `test_file_patterns` answer as the product's one regex of every language's test files once did."""

from __future__ import annotations

import pytest

from swe_forge_dagster.common.paths import is_generic_test_path
from swe_forge_dagster.languages.registry import is_test_path, packs

BEFORE = [
    ("tests/test_calc.py", True),
    ("src/calc.py", False),
    ("test_x.py", True),
    ("pkg/test_x.py", True),
    ("pkg/x_test.py", True),
    ("pkg/x_tests.py", True),
    ("pkg/tests.py", True),
    ("pkg/test.py", True),
    ("conftest.py", True),
    ("src/pkg/conftest.py", True),
    ("src/contest.py", False),
    ("pkg/testing.py", False),
    ("pkg/test_data.json", False),
    ("Test_x.py", False),
    ("pkg/TEST_X.PY", False),
    ("pkg/x_test.pyc", False),
    ("pkg/calc_test.go", True),
    ("calc_test.go", True),
    ("latest/main.go", False),
    ("pkg/testutil.go", False),
    ("pkg/x_test.go.orig", False),
    ("web/__tests__/App.tsx", True),
    ("web/src/App.spec.ts", True),
    ("web/src/App.test.js", True),
    ("web/src/App.test.mjs", True),
    ("web/src/App.test.cjs", True),
    ("web/src/App.test.jsx", True),
    ("web/src/App.test.tsx", True),
    ("web/src/App.spec.mts", True),
    ("web/src/App_test.js", True),
    ("web/src/App-test.js", False),
    ("web/src/App.cy.ts", True),
    ("web/cypress/login.cy.ts", True),
    ("web/src/App.tests.js", False),
    ("web/src/App.spec.json", False),
    ("web/src/spec.ts", False),
    ("web/src/test.ts", False),
    ("src/test/java/org/AppTest.java", True),
    ("src/main/java/org/AppTest.java", True),
    ("src/main/java/org/AppTests.java", True),
    ("src/main/java/org/DbIT.java", True),
    ("src/main/java/org/AppSpec.java", True),
    ("src/main/java/org/Contest.java", False),
    ("src/FooSpec.kt", True),
    ("src/FooTest.kt", True),
    ("src/FooTest.scala", True),
    ("src/FooSpec.groovy", True),
    ("src/FooTest.cs", True),
    ("Lib.Tests/LibTests.cs", True),
    ("Lib.Test/Lib.cs", True),
    ("Lib/Lib.cs", False),
    ("app/src/androidTest/java/AppTest.java", True),
    ("app/src/integrationTest/java/X.java", True),
    ("app/src/androidTest/res/x.xml", True),
    ("app/src/main/res/x.xml", False),
    ("module/src/test/resources/data.txt", True),
    ("crates/x/tests/it.rs", True),
    ("src/lib.rs", False),
    ("benches/bench.rs", False),
    ("src/foo_test.rs", False),
    ("src/test.rs", False),
    ("src/tests.rs", False),
    ("test/ranges-test.cc", True),
    ("src/ranges_test.cc", False),
    ("src/ranges_test.cpp", False),
    ("include/x.h", False),
    ("googletest/src/gtest.cc", False),
    ("spec/models/user_spec.rb", True),
    ("lib/models/user_spec.rb", True),
    ("lib/user_test.rb", True),
    ("lib/test_user.rb", True),
    ("lib/user.rb", False),
    ("spec/helper.rb", True),
    ("Spec/helper.RB", True),
    ("spec/app.js", True),
    ("spec/app.mjs", True),
    ("specs/app.tsx", True),
    ("spec/app.py", True),
    ("spec/data.json", False),
    ("api/spec/openapi.yaml", False),
    ("testing/python/fixtures.py", True),
    ("app/tests.py", True),
    ("pkg/util_tests.py", True),
    ("web/e2e/login.ts", True),
    ("web/src/__mocks__/api.ts", True),
    ("pkg/testdata/x.txt", True),
    ("pkg/test_data/x.txt", True),
    ("pkg/test-data/x.txt", False),
    ("tests/fixtures/x.json", True),
    ("fixtures/x.json", True),
    ("TESTS/x.c", True),
    ("Tests/x.c", True),
    ("README.md", False),
    ("docs/index.rst", False),
    (".github/workflows/ci.yml", False),
    ("pyproject.toml", False),
    ("LICENSE", False),
    ("node_modules/foo/x.test.js", True),
    ("vendor/x_test.go", True),
]
"""Paths for every alternative of the rules before the packs held their own, with what they answered then."""


@pytest.mark.parametrize(("path", "test"), BEFORE)
def test_the_packs_and_the_generic_rules_answer_as_the_one_regex_did(path: str, test: bool) -> None:
    assert is_test_path(path) is test


def test_every_pack_names_its_test_files_and_the_generic_rules_name_no_packs() -> None:
    assert all(language.test_file_patterns for language in packs())
    for path in ("pkg/test_x.py", "conftest.py", "pkg/calc_test.go", "web/src/App.spec.ts", "src/main/java/AppIT.java"):
        assert is_test_path(path) and not is_generic_test_path(path)
