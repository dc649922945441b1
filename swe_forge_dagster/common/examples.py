"""Where the reference agents (`examples/`: emptyagent, baseagent) are, in a checkout or an installed wheel.

The wheel carries them as `swe_forge_dagster/_examples` (pyproject: hatch `force-include`), so
`swe-forge demo` and `--agent-dir $(python -c ...)` work after `pip install` too; in a source
checkout they are the repository's `examples/` folder.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def examples_dir() -> Path:
    """The folder holding `emptyagent/` and `baseagent/`; FileNotFoundError when neither place has it."""
    for candidate in (PACKAGE_DIR / "_examples", PACKAGE_DIR.parent / "examples"):
        if (candidate / "emptyagent").is_dir():
            return candidate
    raise FileNotFoundError(f"the reference agents are neither in {PACKAGE_DIR / '_examples'} nor in a checkout")
