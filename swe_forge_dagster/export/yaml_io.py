"""YAML for task directories: C speed when available, timestamps kept as strings, multi-line strings as `|` blocks.

`workspace.yaml` holds patches and prompts that people read, and `created_at` strings that must come back
exactly as written (nanoseconds and all): PyYAML's defaults fold the first and retype the second.
"""

from __future__ import annotations

from typing import Any

import yaml

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_BaseLoader):
    """SafeLoader that keeps timestamps as their original strings (nanoseconds and all)."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


class _Dumper(_BaseDumper):
    """SafeDumper that writes multi-line strings (patches, prompts) as readable literal blocks."""


def _represent_str(dumper: Any, data: str) -> Any:
    # The emitter falls back to a quoted style by itself when a block cannot hold the text exactly.
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _represent_str)


def yaml_load(text: str) -> Any:
    """Parse YAML safely, leaving timestamps as strings."""
    return yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader subclass


def yaml_dump(data: Any) -> str:
    """Dump YAML safely, keys in insertion order, no line folding."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30)
