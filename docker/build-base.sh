#!/usr/bin/env bash
# build-base.sh — make the classroom image's base locally: a minimal Debian trixie root file
# system from Debian's mirror (debootstrap --variant=minbase), imported into Docker under the
# tag the Dockerfile's FROM names. No registry is needed.
#
#   docker/build-base.sh [--force] [--tag attnbook/debian:trixie-YYYYMMDD] [--mirror URL]
#
# Idempotent: does nothing when the tag already exists, unless --force.
# Needs root (debootstrap), docker and debootstrap >= 1.0.128 with trixie's keys in
# /usr/share/keyrings/debian-archive-keyring.gpg (Debian bookworm has both).
# For a byte-for-byte rebuild of a dated tag, point --mirror at Debian's snapshot archive of
# that date, e.g. http://snapshot.debian.org/archive/debian/20261121T000000Z.
set -euo pipefail
# One build at a time on this machine: the smoke test, the classroom test and `kernel up -lab`
# may all ask for the image at once (go test runs their packages in parallel); the second waits
# and then finds every layer cached.
if [ -z "${ATTNBOOK_BUILD_LOCKED:-}" ] && command -v flock >/dev/null; then
  export ATTNBOOK_BUILD_LOCKED=1
  exec flock /tmp/attnbook-docker-build.lock bash "$0" "$@"
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tag defaults to the one the Dockerfile's `ARG BASE_IMAGE=` names, so the two never drift.
tag=$(sed -n 's/^ARG BASE_IMAGE=//p' "$here/Dockerfile" | head -n1)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --tag) tag=$2; shift ;;
    --mirror) mirror=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build-base: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$tag" ] || { echo "build-base: no tag (Dockerfile has no 'ARG BASE_IMAGE=' line?)" >&2; exit 2; }

start=$(date +%s)
if [ "$force" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-base: $tag exists; nothing to do (use --force to rebuild)"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "build-base: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "build-base: debootstrap not installed (apt-get install debootstrap)" >&2; exit 1; }

root=$(mktemp -d /var/tmp/attnbook-base.XXXXXX)
trap 'rm -rf "$root"' EXIT

echo "build-base: debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase --components=main \
  --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
  "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
    tail -n 30 "$root.log" >&2; rm -f "$root.log"; echo "build-base: debootstrap failed" >&2; exit 1; }
rm -f "$root.log"

# Like Debian's official images: one sources file (with security updates), no caches,
# no recommends, apt lists removed (the Dockerfile runs apt-get update itself).
cat >"$root/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
rm -f "$root/etc/apt/sources.list"
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90attnbook-norecommends"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
       "$root"/var/log/*.log "$root"/tmp/* "$root"/root/.bash_history
: >"$root/etc/machine-id"

echo "build-base: importing as $tag"
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'CMD ["bash"]' \
  --change 'ENV LANG=C.UTF-8' \
  --message "debootstrap --variant=minbase $suite $mirror $(date -u +%Y-%m-%dT%H:%MZ)" \
  - "$tag" >/dev/null
size=$(docker image inspect -f '{{.Size}}' "$tag")
echo "build-base: ok tag=$tag size=$((size / 1000000))MB time=$(( $(date +%s) - start ))s"
