"""The installed language packs: the built-in ones and those installed distributions declare, in priority order.

The order decides between languages when nothing else does (a repository with the manifests of several is the
first one's). Packs come from the product (`BUILT_IN`) and from installed distributions that declare one in the
`swe_forge.languages` entry-point group (`name = module:PACK`), so a language can be added with no edit to the
product: a plugin's module imports `languages.pack` and the kernel (`execution`), never the registry (it is loaded
while the registry is). The rest of the code asks `languages.registry`, which reads this list.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import entry_points

from swe_forge_dagster.languages.cpp import pack as cpp
from swe_forge_dagster.languages.go import pack as go
from swe_forge_dagster.languages.java import pack as java
from swe_forge_dagster.languages.node import pack as node
from swe_forge_dagster.languages.pack import LanguagePack
from swe_forge_dagster.languages.python import pack as python
from swe_forge_dagster.languages.rust import pack as rust

ENTRY_POINT_GROUP = "swe_forge.languages"
"""The entry-point group an installed distribution declares its packs in (`ruby = swe_forge_ruby:PACK`)."""
BUILT_IN: tuple[LanguagePack, ...] = (python.PACK, node.PACK, go.PACK, rust.PACK, java.PACK, cpp.PACK)


class PackPluginError(RuntimeError):
    """An installed language pack that cannot be used: it does not load, is not a pack, or reuses a name."""


def installed_packs(built_in: Sequence[LanguagePack] = BUILT_IN) -> tuple[LanguagePack, ...]:
    """The packs installed distributions declare (`ENTRY_POINT_GROUP`), by entry-point name; a plugin that fails
    is named in the error rather than silently leaving its language out."""
    found: list[LanguagePack] = []
    names = {p.name for p in built_in}
    runner_names = {r.name for p in built_in for r in p.runners}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name):
        try:
            value = point.load()
        except Exception as exc:
            raise PackPluginError(f"language pack {point.value} does not load: {exc!r}") from exc
        if not isinstance(value, LanguagePack):
            raise PackPluginError(f"language pack {point.value} is a {type(value).__name__}, not a LanguagePack")
        clashes = ({value.name} & names) | ({r.name for r in value.runners} & runner_names)
        if clashes:
            raise PackPluginError(f"language pack {point.value} reuses the names {sorted(clashes)}")
        names.add(value.name)
        runner_names.update(r.name for r in value.runners)
        found.append(value)
    return tuple(found)


PACKS: tuple[LanguagePack, ...] = (*BUILT_IN, *installed_packs())
DEFAULT_PACK = PACKS[0]
"""The language of the base images every sandbox starts from; a repository that says nothing else is tested so."""
DEFAULT_RUNNER = DEFAULT_PACK.default_runner
"""The runner of a command no adapter recognises (every command before other languages were supported)."""
