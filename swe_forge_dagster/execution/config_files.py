"""Files a runner's effective configuration names are configuration too, whatever they are called.

A runner's configuration points at code it runs around the tests: jest's `setupFiles`, `setupFilesAfterEnv`,
`testEnvironment`, `transform`, `reporters`, `globalSetup`; mocha's `require` and `file`; babel's plugins and presets
(`languages.node.config`). Such a file is not a test file and its name is the repository's choice
(`jest.setup.js`, `tools/transform.js`), so no list of names protects it; an edit to it changes how every test
runs, as an edit to the config file itself would. The configuration the sanity container read (no agent code)
names them, so the harness (`harness.protection.apply_agent_diff`) resets the diff's changes to any file it names,
and lists them in `dropped_paths`, unless the gold patch changes that file too. Each pack says which part of its
loaders' answer names the runner's files (`languages.node.config.named_files`): not `package.json`'s `imports` or
`main`, which name the package's own code.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from swe_forge_dagster.execution.repo_box import REPO_DIR

_PREFIXES = (f"{REPO_DIR}/", "<rootDir>/", "./")


def files_named(config: object, installed: Collection[str] = ()) -> frozenset[str]:
    """Repo-relative paths of files in /repo that `config` (a loader's JSON answer) names: strings that are an
    absolute /repo path, `<rootDir>/…` or `./…`, or a relative path with a directory or a script suffix; never
    files under a folder of installed packages (`installed`, the pack's) or the checkout itself."""
    named: set[str] = set()
    for text in _strings(config):
        path = text
        for prefix in _PREFIXES:
            if path.startswith(prefix):
                path = path[len(prefix) :]
                break
        else:
            if text.startswith("/") or not _looks_like_a_file(text):
                continue
        path = path.strip("/")
        parts = path.split("/")
        if path and ".." not in parts and not any(folder in parts for folder in installed) and "*" not in path:
            named.add(path)
    return frozenset(named)


def _looks_like_a_file(text: str) -> bool:
    """A relative string a loader would resolve as a file of the project (`test/setup.js`, `setup.ts`)."""
    return " " not in text and "\n" not in text and text.rsplit(".", 1)[-1] in _SCRIPT_SUFFIXES and "." in text


_SCRIPT_SUFFIXES = frozenset({"js", "cjs", "mjs", "ts", "cts", "mts", "jsx", "tsx", "json", "py", "cfg", "toml", "ini"})


def _strings(value: object) -> Iterator[str]:
    """Every string in a JSON-like value, keys included (jest's `transform` keys are patterns, but a `moduleNameMapper`
    may map to a file)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
