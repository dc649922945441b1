#!/usr/bin/env bash
# Build a language toolchain sandbox image on top of a local base image, from Debian packages (no registry):
# swe-forge-<toolchain>:<suite>, e.g. swe-forge-node:bookworm (nodejs + npm: Node 18; trixie: Node 20).
# The Debian packages are the language pack's (swe_forge_dagster/execution/languages/<toolchain>.py,
# `debian_packages`), read with the project's venv (scripts/bootstrap creates it).
# The base image (scripts/build-base-image.sh swe-forge-base:<suite>) is built first when missing.
# Cached by tag: does nothing when the image already exists.
# Usage: scripts/build-toolchain-image.sh TOOLCHAIN [SUITE]   (default suite: bookworm)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PACKS=(env -C "$ROOT" "$ROOT/.venv/bin/python" -m swe_forge_dagster.execution.languages)
TOOLCHAIN="${1:?usage: scripts/build-toolchain-image.sh TOOLCHAIN [bookworm|trixie|bullseye] (toolchains: $("${PACKS[@]}" names))}"
SUITE="${2:-bookworm}"
PACKAGES="$("${PACKS[@]}" packages "$TOOLCHAIN")" || {
  echo "unknown toolchain $TOOLCHAIN: $("${PACKS[@]}" names)" >&2
  exit 2
}
TAG="swe-forge-$TOOLCHAIN:$SUITE"
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "toolchain image $TAG present"
  exit 0
fi
BASE="swe-forge-base:$SUITE"
"$(dirname "$0")/build-base-image.sh" "$BASE" "$SUITE"
echo "building $TAG from $BASE with $PACKAGES (a few minutes)"
CONTAINER="swe-forge-toolchain-build-$TOOLCHAIN-$SUITE-$$"
trap 'docker rm -f "$CONTAINER" >/dev/null 2>&1 || true' EXIT
docker run --name "$CONTAINER" "$BASE" bash -c \
  "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES \
   && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb" >"/tmp/swe-forge-toolchain-$TOOLCHAIN-$SUITE.log" 2>&1 \
  || { tail -20 "/tmp/swe-forge-toolchain-$TOOLCHAIN-$SUITE.log" >&2; exit 1; }
docker commit --change 'CMD ["/bin/bash"]' "$CONTAINER" "$TAG" >/dev/null
echo "built $TAG"
