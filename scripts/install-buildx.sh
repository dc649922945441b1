#!/usr/bin/env bash
# Install the `docker buildx` CLI plugin, which SWE-bench 5 builds its images with (`docker buildx build --load`),
# on a machine whose Docker has none (Debian bookworm's docker.io ships without it). The plugin comes from
# Debian trixie's `docker-buildx` package, pinned by its SHA-256, fetched from the Debian mirror (reachable where
# Docker Hub and GitHub are not) and unpacked into Docker's system-wide plugin directory (root) or
# ~/.docker/cli-plugins. It uses the engine's own builder (the `docker` driver), so images build from local base
# images with no registry. Does nothing when `docker buildx` already works.
# Usage: scripts/install-buildx.sh   (mirror: SWE_FORGE_DEBIAN_MIRROR, default http://deb.debian.org/debian)
set -euo pipefail
if docker buildx version >/dev/null 2>&1; then
  docker buildx version
  exit 0
fi
MIRROR="${SWE_FORGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEB="docker-buildx_0.13.1+ds1-3_amd64.deb"
SHA256="fcf8c48204d1603c8f209451d7827eb91bf30759578baf7704e9e1a87e5f1d7f"
if [ "$(id -u)" = 0 ]; then DEST=/usr/local/lib/docker/cli-plugins; else DEST="$HOME/.docker/cli-plugins"; fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
curl -fsSL --retry 3 --max-time 600 -o "$WORK/$DEB" "$MIRROR/pool/main/d/docker-buildx/$DEB"
echo "$SHA256  $WORK/$DEB" | sha256sum -c --quiet -
dpkg-deb -x "$WORK/$DEB" "$WORK/root"
mkdir -p "$DEST"
install -m 0755 "$WORK/root/usr/libexec/docker/cli-plugins/docker-buildx" "$DEST/docker-buildx"
docker buildx version
