"""`python -m swe_forge_dagster.languages packages|images|names [PACK]`: what the shell scripts read.

`packages node` prints the Debian packages of the node pack's toolchain image (what
`scripts/build-toolchain-image.sh` installs); `images node` its image tags; `names` the packs with
a toolchain image. The packs are the single place these are written.
"""

from __future__ import annotations

import sys

from swe_forge_dagster.languages.registry import pack, packs


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("packages", "images", "names"):
        print("usage: python -m swe_forge_dagster.languages packages|images|names [PACK]", file=sys.stderr)
        return 2
    if argv[0] == "names":
        print(" ".join(language.name for language in packs() if language.debian_packages))
        return 0
    try:
        language = pack(argv[1] if len(argv) > 1 else "")
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(language.debian_packages if argv[0] == "packages" else " ".join(language.images))
    return 0 if language.debian_packages or argv[0] == "images" else 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
