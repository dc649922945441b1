#!/usr/bin/env bash
# Install the `docker buildx` CLI plugin, which SWE-bench 5 builds its images with (`docker buildx build --load`),
# on a machine whose Docker has none (Debian bookworm's docker.io ships without it). Does nothing when
# `docker buildx` already works.
#
# The implementation is `swe-forge setup --buildx` (swe_forge_dagster/common/buildx.py): with .venv present (after
# scripts/bootstrap, as in .ci/run) this script runs it. Without .venv it falls back to the same steps in shell,
# reading the pin (the .deb's name and SHA-256) from that module, so the pin is written once: Debian trixie's
# `docker-buildx` package, fetched from the Debian mirror (reachable where Docker Hub and GitHub are not) and
# unpacked into Docker's system-wide plugin directory (root) or ~/.docker/cli-plugins ($DOCKER_CONFIG/cli-plugins
# when DOCKER_CONFIG is set). It uses the engine's own builder (the `docker` driver), so images build from local
# base images with no registry.
# Usage: scripts/install-buildx.sh   (mirror: SWE_FORGE_DEBIAN_MIRROR, default http://deb.debian.org/debian)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -x "$ROOT/.venv/bin/python" ]; then
  exec "$ROOT/.venv/bin/python" -m swe_forge_dagster.cli setup --buildx
fi
if docker buildx version >/dev/null 2>&1; then
  docker buildx version
  exit 0
fi
PIN="$ROOT/swe_forge_dagster/common/buildx.py"
DEB="$(sed -n 's/^BUILDX_DEB = "\(.*\)"$/\1/p' "$PIN")"
SHA256="$(sed -n 's/^BUILDX_SHA256 = "\(.*\)"$/\1/p' "$PIN")"
[ -n "$DEB" ] && [ -n "$SHA256" ] || { echo "install-buildx: no BUILDX_DEB/BUILDX_SHA256 in $PIN" >&2; exit 1; }
MIRROR="${SWE_FORGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if [ -n "${DOCKER_CONFIG:-}" ]; then DEST="$DOCKER_CONFIG/cli-plugins"
elif [ "$(id -u)" = 0 ]; then DEST=/usr/local/lib/docker/cli-plugins
else DEST="$HOME/.docker/cli-plugins"; fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
curl -fsSL --retry 3 --max-time 600 -o "$WORK/$DEB" "$MIRROR/pool/main/d/docker-buildx/$DEB"
echo "$SHA256  $WORK/$DEB" | sha256sum -c --quiet -
dpkg-deb -x "$WORK/$DEB" "$WORK/root"
mkdir -p "$DEST"
install -m 0755 "$WORK/root/usr/libexec/docker/cli-plugins/docker-buildx" "$DEST/docker-buildx"
docker buildx version
