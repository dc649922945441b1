"""A cargo test run's effective build configuration, as cargo's own manifest loader reads it: to compare before and
after a diff.

Cargo decides what a test run compiles from more than `Cargo.toml`: a `build.rs` at the package root is a build
script (run before the tests are compiled: it can rewrite them or set `rustc` flags) whether or not the manifest
names it, and target paths, features and the edition come from the manifest's defaults and the tree's layout.
`cargo metadata --no-deps --offline` answers for all of it (the library's, the tests' and the build script's
targets with their sources, the edition, `links`; not examples, benches, binaries or features, which a fix may add),
so the harness asks it in the sanity container and again after the diff
(`harness.runner_config`): a difference resets the manifests the diff changed, and one that remains (a new build
script) makes the task `unresolved` with the reason. The build script's source is the configuration's own file
(`named_files`): an edit to it is reset. `Cargo.toml` itself is the environment's (`dependencies_fixed`).
"""

from __future__ import annotations

import json
from typing import Any

from swe_forge_dagster.execution.repo_box import REPO_DIR, exec_demux
from swe_forge_dagster.execution.sandbox import Sandbox

CONFIG_FILES = frozenset({"Cargo.toml", "Cargo.lock"})
_TARGET_KEYS = ("kind", "crate_types", "name", "src_path", "edition", "test", "doctest", "required-features")
_PACKAGE_KEYS = ("name", "edition", "links", "manifest_path", "rust_version")
_RUN_KINDS = {"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro", "test", "custom-build"}
"""The targets a test run builds: the library, the integration tests and the build script."""


def cargo_config(box: Sandbox, _files: object = ()) -> dict[str, Any] | None:
    """What cargo's manifest loader makes of /repo (packages, their targets and features), or None when cargo
    cannot answer."""
    script = f"cd {REPO_DIR} && timeout 120 cargo metadata --format-version 1 --no-deps --offline"
    exit_code, stdout, _stderr = exec_demux(box, ["bash", "-c", script])
    if exit_code != 0:
        return None
    try:
        metadata = json.loads(stdout)
    except ValueError:
        return None
    packages = []
    for package in metadata.get("packages") or []:
        kept = {key: package.get(key) for key in _PACKAGE_KEYS}
        kept["targets"] = [
            {key: t.get(key) for key in _TARGET_KEYS}
            for t in package.get("targets") or []
            if set(t.get("kind") or []) & _RUN_KINDS  # not examples, benches or binaries: a fix may add them
        ]
        packages.append(kept)
    return {"packages": packages, "workspace_members": metadata.get("workspace_members")}


def named_files(answer: object) -> frozenset[str]:
    """The build scripts cargo runs (`custom-build` targets), repo-relative: configuration, whatever they are
    called."""
    if not isinstance(answer, dict):
        return frozenset()
    found = set()
    for package in answer.get("packages") or []:
        for target in package.get("targets") or []:
            source = str(target.get("src_path") or "")
            if "custom-build" in (target.get("kind") or []) and source.startswith(f"{REPO_DIR}/"):
                found.add(source[len(REPO_DIR) + 1 :])
    return frozenset(found)
