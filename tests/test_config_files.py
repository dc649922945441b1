"""Files a runner's effective configuration names are configuration (`execution.config_files`): which strings of a
loader's answer name a file of /repo. The real run (a jest `setupFilesAfterEnv` file edited by a cheating agent, on
a real jest task) is in `tests/test_toolchain_red_team.py`."""

from __future__ import annotations

from swe_forge_dagster.execution.config_files import files_named
from swe_forge_dagster.languages.node.config import INSTALLED, named_files

JEST = {
    "configs": [
        {
            "rootDir": "/repo",
            "roots": ["/repo"],
            "setupFilesAfterEnv": ["/repo/jest.setup.js"],
            "testEnvironment": "/repo/node_modules/jest-environment-node/build/index.js",
            "transform": [["\\.[jt]sx?$", "/repo/tools/transform.cjs", {}]],
            "testMatch": ["**/__tests__/**/*.[jt]s?(x)"],
            "moduleNameMapper": [["^@/(.*)$", "/repo/src/$1"]],
            "coverageDirectory": "/repo/coverage",
        }
    ],
    "globalConfig": {"reporters": [["/repo/reporters/dots.js", {}]], "rootDir": "/repo"},
}


def test_the_files_a_jest_answer_names_are_its_setup_transform_and_reporter_not_packages_or_globs() -> None:
    named = files_named(JEST, INSTALLED)
    assert {"jest.setup.js", "tools/transform.cjs", "reporters/dots.js"} <= named
    assert not any(path.startswith("node_modules") or "*" in path for path in named)
    assert "" not in named and "repo" not in named


def test_only_the_keys_that_name_code_run_around_the_tests_count() -> None:
    """jest's `moduleNameMapper` and `collectCoverageFrom` name the package's own files: a fix may edit them."""
    named = named_files({"jest": JEST})
    assert {"jest.setup.js", "tools/transform.cjs", "reporters/dots.js"} <= named
    assert not {"src/$1", "coverage"} & named
    mapped = {"jest": {"configs": [{"moduleNameMapper": [["^cfg$", "/repo/src/config.js"]]}], "globalConfig": {}}}
    assert named_files(mapped) == frozenset()


def test_mocha_names_its_required_files_relative_and_the_package_keys_name_nothing() -> None:
    answer = {
        "mocha": {"require": ["test/setup.js", "@babel/register", "./hooks.mjs"], "spec": ["test/**/*.spec.js"]},
        "package": {"imports": {"#x": "./src/x.js"}, "type": "module"},
        "npm": {"node-options": "--require ./src/boot.js"},
        "babel": [{"plugins": [["/repo/tools/plugin.js", None]], "config": "/repo/babel.cfg.js"}],
    }
    assert named_files(answer) == {"test/setup.js", "hooks.mjs", "tools/plugin.js", "babel.cfg.js"}
    assert named_files(None) == frozenset() and named_files("unreadable") == frozenset()
