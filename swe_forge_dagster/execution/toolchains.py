"""Toolchains other than Python: which one a repository needs, the image that has it, and what it needs offline.

A repository's toolchain is read from its manifests at the base commit (`package.json` -> node,
`go.mod` -> go, `Cargo.toml` -> rust, `pom.xml`/Gradle -> java, `CMakeLists.txt` -> cpp) and, when
it has several, from the language of the change itself (a Python project with a `package.json`
for its docs stays Python). The images are local toolchain images built from Debian packages
(`scripts/build-toolchain-image.sh`, no registry), ordered by what the repository declares: the Go
release in `go.mod`'s `go` line, Node's `engines.node` or `.nvmrc`.

`dependency_problem` is the check that lets the pipeline spend nothing on what cannot be built
here: a crate with crates.io dependencies, a Go module with requirements and no `vendor/`, a Maven
or Gradle build (Maven Central, the Gradle plugin portal), CMake's `FetchContent` — each needs a
registry whose reachability is probed once per process (`registry_reachable`, URLs are settings).
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

import httpx

from swe_forge_dagster.settings import TOOLCHAIN_IMAGES, get_settings

TOOLCHAIN_MANIFESTS = {
    "package.json": "node",
    "go.mod": "go",
    "Cargo.toml": "rust",
    "pom.xml": "java",
    "build.gradle": "java",
    "build.gradle.kts": "java",
    "CMakeLists.txt": "cpp",
}
PYTHON_MANIFESTS = ("setup.py", "setup.cfg", "pyproject.toml")
_EXTENSIONS = {
    ".py": "python",
    ".js": "node",
    ".jsx": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "node",
    ".tsx": "node",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "java",
    ".c": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}
EXTRA_FILES = (
    ".nvmrc",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.sum",
    "vendor/modules.txt",
    ".cargo/config.toml",
    ".cargo/config",
    "rust-toolchain",
    "rust-toolchain.toml",
)
"""Files besides the manifests that decide the image or the install (read when present)."""


def change_language(files: Sequence[str]) -> str | None:
    """The toolchain most of a change's files are written for (None: no source file it knows)."""
    counts = Counter(_EXTENSIONS[suffix] for f in files if (suffix := PurePosixPath(f).suffix) in _EXTENSIONS)
    return counts.most_common(1)[0][0] if counts else None


def toolchain_of(present: set[str], changed: Sequence[str] = ()) -> str | None:
    """`python`, `node`, `go`, `rust`, `java`, `cpp` from the root files `present` and the changed files; None: none."""
    found = {TOOLCHAIN_MANIFESTS[name] for name in present if name in TOOLCHAIN_MANIFESTS}
    if any(name in present for name in PYTHON_MANIFESTS):
        found.add("python")
    wanted = change_language(changed)
    if wanted == "python" or ("python" in found and wanted in (None, "cpp", "rust")):
        return "python"  # a Python change, or a Python package with compiled extensions: tested from Python
    if wanted in found:
        return wanted
    for toolchain in ("python", "node", "go", "rust", "java", "cpp"):
        if toolchain in found:
            return toolchain
    return None


def toolchain_images(
    toolchain: str,
    files: Mapping[str, str],
    available: Callable[[str], bool] | None = None,
    needed: tuple[int, ...] | None = None,
) -> list[str]:
    """The local images for `toolchain`, those whose version meets the repository's declared minimum (or `needed`)
    first."""
    images = TOOLCHAIN_IMAGES.get(toolchain, {})
    needed = needed or declared_version(toolchain, files)

    def fits(version: str) -> bool:
        return needed is None or _numbers(version) >= needed

    ordered = sorted(images, key=lambda tag: (not fits(images[tag]), _numbers(images[tag])))
    return [tag for tag in ordered if available is None or available(tag)]


def declared_version(toolchain: str, files: Mapping[str, str]) -> tuple[int, ...] | None:
    """The minimum toolchain version the repository declares (go.mod's `go`, engines.node / .nvmrc, rust-toolchain
    or Cargo's `rust-version`, the Java release in pom.xml)."""
    if toolchain == "go" and (match := re.search(r"^go\s+(\d+\.\d+)", files.get("go.mod", ""), re.MULTILINE)):
        return _numbers(match.group(1))
    if toolchain == "rust":
        toolchain_file = files.get("rust-toolchain.toml", files.get("rust-toolchain", ""))
        declared = re.search(r"^\s*(?:channel\s*=\s*\"?)?(\d+\.\d+)", toolchain_file, re.MULTILINE) or re.search(
            r"^rust-version\s*=\s*\"(\d+\.\d+)", files.get("Cargo.toml", ""), re.MULTILINE
        )
        return _numbers(declared.group(1)) if declared else None
    java_release = r"<(?:maven\.compiler\.(?:release|source)|java\.version)>(?:1\.)?(\d+)<"
    if toolchain == "java" and (match := re.search(java_release, files.get("pom.xml", ""))):
        return _numbers(match.group(1))
    if toolchain == "node":
        if match := re.search(r"(\d+)", files.get(".nvmrc", "")):
            return _numbers(match.group(1))
        engines = str((_json(files.get("package.json")).get("engines") or {}).get("node") or "")
        if match := re.search(r">=?\s*v?(\d+)", engines) or re.search(r"\^?(\d+)", engines):
            return _numbers(match.group(1))
    return None


def dependency_problem(toolchain: str, files: Mapping[str, str], tree: set[str]) -> str | None:
    """Why the dependencies cannot be installed in the sandbox (a registry it cannot reach), else None."""
    settings = get_settings()
    if toolchain == "rust":
        needed = crates_io_dependencies(files.get("Cargo.toml", ""))
        vendored = "[source.vendored-sources]" in files.get(".cargo/config.toml", files.get(".cargo/config", ""))
        if needed and not vendored and not registry_reachable(settings.crates_url):
            named = ", ".join(f"{kind} {name}" for kind, name in needed[:6]) + (", …" if len(needed) > 6 else "")
            verb = "needs" if len(needed) == 1 else "need"  # cargo resolves optional and dev ones too
            return f"{named} {verb} crates.io ({settings.crates_url}), unreachable from the sandbox"
    if toolchain == "go":
        required = go_requirements(files.get("go.mod", ""))
        if required and "vendor/modules.txt" not in tree and not registry_reachable(settings.goproxy_url):
            return (
                f"module {required[0]} needs the Go module proxy ({settings.goproxy_url}), "
                "unreachable from the sandbox, and the repository vendors no modules"
            )
    if toolchain == "java" and not registry_reachable(settings.maven_url):
        build = "Gradle" if any(name.startswith("build.gradle") for name in files) else "Maven"
        return f"a {build} build needs Maven Central ({settings.maven_url}), unreachable from the sandbox"
    fetched = re.search(
        r"\b(?:FetchContent_Declare|ExternalProject_Add)\s*\([^)]*?\b(?:GIT_REPOSITORY|URL)\s+(\S+)",
        files.get("CMakeLists.txt", ""),
    )
    if toolchain == "cpp" and fetched:
        return f"CMake fetches {fetched.group(1)} at configure time, which the sandbox cannot download"
    if toolchain == "node" and not registry_reachable(settings.npm_registry):
        return f"the npm registry ({settings.npm_registry}) is unreachable from the sandbox"
    return None


def crates_io_dependencies(cargo_toml: str) -> list[tuple[str, str]]:
    """(kind, crate) of every dependency that comes from a registry (no `path`, no `git`), in table order."""
    try:
        manifest = tomllib.loads(cargo_toml)
    except tomllib.TOMLDecodeError:
        return []
    tables = [(kind, manifest.get(key) or {}) for key, kind in _CARGO_TABLES]
    for target in (manifest.get("target") or {}).values():
        tables += [(kind, target.get(key) or {}) for key, kind in _CARGO_TABLES]
    return [
        (f"optional {kind}" if isinstance(spec, dict) and spec.get("optional") else kind, name)
        for kind, table in tables
        for name, spec in table.items()
        if not (isinstance(spec, dict) and ("path" in spec or "git" in spec))
    ]


_CARGO_TABLES = (
    ("dependencies", "dependency"),
    ("dev-dependencies", "dev-dependency"),
    ("build-dependencies", "build-dependency"),
)


def go_requirements(go_mod: str) -> list[str]:
    """The modules `go.mod` requires (single lines and `require ( … )` blocks), minus those replaced by a local path."""
    required: list[str] = []
    in_block = False
    for raw in go_mod.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                required.append(line.split()[0])
        elif line.startswith("require ("):
            in_block = True
        elif line.startswith("require "):
            required.append(line.split()[1])
    local = {m.group(1) for m in re.finditer(r"^replace\s+(\S+).*=>\s*\.{1,2}/", go_mod, re.MULTILINE)}
    return [module for module in required if module not in local]


_REACHED: dict[str, float] = {}
RETRY_UNREACHABLE_S = 300.0


def registry_reachable(url: str, timeout: float = 5.0) -> bool:
    """Whether `url` answers at all (any HTTP status), from this host. A success is remembered for the process; a
    failure only for `RETRY_UNREACHABLE_S` (a blip must not reject every later task of the process)."""
    now = time.monotonic()
    if url in _REACHED and (_REACHED[url] > 0 or now + _REACHED[url] < RETRY_UNREACHABLE_S):
        return _REACHED[url] > 0
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, verify=_verify()) as client:
            client.head(url)
    except httpx.HTTPError:
        _REACHED[url] = -now  # negative: when it failed
        return False
    _REACHED[url] = now or 1.0
    return True


def _verify() -> str | bool:
    bundle = get_settings().ca_bundle
    return str(bundle) if bundle else True


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def _json(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
