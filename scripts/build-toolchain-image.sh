#!/usr/bin/env bash
# Build a language toolchain sandbox image on top of a local base image, from Debian packages (no registry):
#   node  -> swe-forge-node:<suite>  (nodejs + npm; bookworm: Node 18, trixie: Node 20)
#   go    -> swe-forge-go:<suite>    (golang-go)
#   rust  -> swe-forge-rust:<suite>  (rustc + cargo)
#   java  -> swe-forge-java:<suite>  (OpenJDK + Maven + Gradle)
#   cpp   -> swe-forge-cpp:<suite>   (gcc/g++ + make + cmake + ccache)
# The base image (scripts/build-base-image.sh swe-forge-base:<suite>) is built first when missing.
# Cached by tag: does nothing when the image already exists.
# Usage: scripts/build-toolchain-image.sh TOOLCHAIN [SUITE]   (default suite: bookworm)
set -euo pipefail
TOOLCHAIN="${1:?usage: scripts/build-toolchain-image.sh node|go|rust|java|cpp [bookworm|trixie|bullseye]}"
SUITE="${2:-bookworm}"
case "$TOOLCHAIN" in
  node) PACKAGES="nodejs npm" ;;
  go) PACKAGES="golang-go" ;;
  rust) PACKAGES="rustc cargo" ;;
  java) PACKAGES="default-jdk-headless maven gradle" ;;
  cpp) PACKAGES="g++ make cmake ccache" ;;
  *) echo "unknown toolchain $TOOLCHAIN: node, go, rust, java or cpp" >&2; exit 2 ;;
esac
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
