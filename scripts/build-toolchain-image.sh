#!/usr/bin/env bash
# Build a language toolchain sandbox image now, what the pipeline otherwise does on first need
# (swe_forge_dagster/environments/toolchain_images.py): swe-forge-<toolchain>:<suite> from the language pack's
# Debian packages (swe_forge_dagster/languages/<toolchain>/pack.py, `debian_packages`) on
# swe-forge-base:<suite>, e.g. swe-forge-node:bookworm (nodejs + npm: Node 18); or a pack's own build, e.g.
# swe-forge-node:20 (Node 20 from the npm registry): give the tag's version as SUITE.
# The base image (scripts/build-base-image.sh swe-forge-base:<suite>) is built first when missing.
# Cached by tag: does nothing when the image already exists.
# Usage: scripts/build-toolchain-image.sh TOOLCHAIN [SUITE|VERSION]   (default: bookworm)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/bootstrap"   # the language packs are read from the project's environment
PYTHON=(env -C "$ROOT" "$ROOT/.venv/bin/python" -m)
PACKS=("${PYTHON[@]}" swe_forge_dagster.languages)
TOOLCHAIN="${1:?usage: scripts/build-toolchain-image.sh TOOLCHAIN [bookworm|trixie|bullseye|VERSION] (toolchains: $("${PACKS[@]}" names))}"
SUITE="${2:-bookworm}"
"${PACKS[@]}" packages "$TOOLCHAIN" >/dev/null || {
  echo "unknown toolchain $TOOLCHAIN: $("${PACKS[@]}" names)" >&2
  exit 2
}
TAG="swe-forge-$TOOLCHAIN:$SUITE"
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "toolchain image $TAG present"
  exit 0
fi
case "$SUITE" in
  bullseye | bookworm | trixie) "$(dirname "$0")/build-base-image.sh" "swe-forge-base:$SUITE" "$SUITE" ;;
  *) "$(dirname "$0")/build-base-image.sh" swe-forge-base:bookworm bookworm ;;
esac
echo "building $TAG (a few minutes)"
"${PYTHON[@]}" swe_forge_dagster.environments.toolchain_images "$TAG"
