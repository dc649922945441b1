"""What a changed file is: test code, documentation/config, or source.

One set of rules for the whole product: the local filter rejects docs-only and tests-only PRs
with them, and the task stage splits a PR into `patch` and `test_patch` with them. The rules here are
the generic ones (test folders, and the conventions of languages no pack covers yet); each language pack
adds its own test file names (`LanguagePack.test_file_patterns`), and `languages.registry.is_test_path`
answers with both.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

# `testing/` counts (pytest's own suite lives there, and SWE-bench puts sympy/testing/ in test_patch).
_TEST_DIRS = re.compile(r"(^|/)(tests?|testing|__tests__|__mocks__|e2e|test_?data|fixtures)(/|$)", re.IGNORECASE)
# The conventions of languages with no pack (Ruby's RSpec and minitest, C#, Scala, Groovy): a pack that comes to
# cover one of them takes its rule over. `spec/` counts only for code files (an api/spec/openapi.yaml is not a test).
_SPEC_DIRS = re.compile(r"(^|/)specs?/.*\.rb$", re.IGNORECASE)
_TEST_FILES = re.compile(r"(.*(Tests?|IT|Spec)\.(cs|scala|groovy)$|.*_spec\.rb$|.*_test\.rb$|^test_.*\.rb$)")
_DOTNET_TEST_PROJECT = re.compile(r"(^|/)[^/]+\.Tests?/")

_DOC_EXTENSIONS = frozenset(
    {
        "md",
        "markdown",
        "txt",
        "rst",
        "adoc",
        "yml",
        "yaml",
        "json",
        "toml",
        "ini",
        "cfg",
        "csv",
        "svg",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "ico",
        "webp",
        "lock",
    }
)
_DOC_NAMES = (
    "readme",
    "changelog",
    "changes",
    "license",
    "licence",
    "contributing",
    "authors",
    "codeowners",
    "code_of_conduct",
    "security",
    "notice",
    ".gitignore",
    ".gitattributes",
    ".editorconfig",
    ".prettierrc",
    ".eslintignore",
    ".pre-commit-config",
)
_DOC_DIRS = re.compile(r"(^|/)(docs?|documentation|\.github)(/|$)", re.IGNORECASE)


def is_generic_test_path(path: str) -> bool:
    """Whether `path` is test code by the generic rules alone (a test folder, a language no pack covers); the
    product asks `languages.registry.is_test_path`, which adds every pack's test file names."""
    name = PurePosixPath(path).name
    return bool(
        _TEST_DIRS.search(path)
        or _SPEC_DIRS.search(path)
        or _TEST_FILES.match(name)
        or _DOTNET_TEST_PROJECT.search(path)
    )


def is_docs_path(path: str) -> bool:
    """Documentation or configuration only (the seed's docs-only rule, plus docs/ and .github/)."""
    name = PurePosixPath(path).name.lower()
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    return extension in _DOC_EXTENSIONS or name.startswith(_DOC_NAMES) or bool(_DOC_DIRS.search(path))
