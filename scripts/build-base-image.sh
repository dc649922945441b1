#!/usr/bin/env bash
# Build a local sandbox base image without a registry: a Debian suite via debootstrap, loaded
# with `docker import`. Cached by tag: does nothing when the image already exists.
# Usage: scripts/build-base-image.sh [TAG [SUITE]]   (default: swe-forge-base:bookworm bookworm)
# Suites and their Pythons: bullseye 3.9, bookworm 3.11, trixie 3.13 (swe-forge-base:<suite>).
set -euo pipefail
TAG="${1:-${SWE_FORGE_BASE_IMAGE:-swe-forge-base:bookworm}}"
SUITE="${2:-${TAG##*:}}"
case "$SUITE" in bullseye|bookworm|trixie) ;; *) SUITE=bookworm ;; esac
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "base image $TAG present"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install -y debootstrap" >&2; exit 1; }
ROOTFS="$(mktemp -d /tmp/swe-forge-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
echo "building $TAG from Debian $SUITE with debootstrap (about a minute)"
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,python3-pytest,git,ca-certificates \
  "$SUITE" "$ROOTFS" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/tmp/swe-forge-debootstrap.log 2>&1 \
  || { tail -20 /tmp/swe-forge-debootstrap.log >&2; exit 1; }
# `python` as well as `python3`, as in the python:* images that tasks expect.
ln -sf /usr/bin/python3 "$ROOTFS/usr/bin/python"
rm -rf "$ROOTFS/var/cache/apt/archives/"*.deb "$ROOTFS/var/lib/apt/lists/"*
tar -C "$ROOTFS" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' - "$TAG" >/dev/null
echo "built $TAG"
