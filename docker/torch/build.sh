#!/usr/bin/env bash
# build.sh — build attnbook's current-PyTorch image (docker/torch/Dockerfile: Debian trixie's
# python3-torch on the classroom image's base) once, and cache it under its tag.
#
#   docker/torch/build.sh            # build unless the tag exists; stdout: the tag (progress: stderr)
#   docker/torch/build.sh --print    # build nothing: print tag=, torch_deb_version=, base_image=
#   docker/torch/build.sh --force    # rebuild even if the tag exists
#
# The tag is attnbook/torch:<TORCH_DEB_VERSION, with '+', '~' and ':' as '_'>-<first 12 hex digits
# of the Dockerfile's SHA-256>: the pin and the recipe name the image, so an edited Dockerfile
# gets a new one. The base image is made first when missing (docker/build-base.sh). Only the
# build reaches Debian's mirror ($DOCKER_BUILD_NETWORK, default host, as docker/build.sh); the
# bench runs the image with --network none.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dockerfile=$here/Dockerfile
arg() { sed -n "s/^ARG $1=//p" "$dockerfile" | head -n1; }
version=$(arg TORCH_DEB_VERSION)
base=$(arg BASE_IMAGE)
[ -n "$version" ] && [ -n "$base" ] || { echo "torch build: $dockerfile lacks ARG TORCH_DEB_VERSION= or ARG BASE_IMAGE=" >&2; exit 2; }
sum=$(sha256sum "$dockerfile" | cut -c1-12)
tag="attnbook/torch:$(printf '%s' "$version" | tr '+~:' '___')-$sum"

force=0
case "${1:-}" in
  --print) printf 'tag=%s\ntorch_deb_version=%s\nbase_image=%s\n' "$tag" "$version" "$base"; exit 0 ;;
  --force) force=1 ;;
  "") ;;
  -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
  *) echo "torch build: unknown argument $1 (try --help)" >&2; exit 2 ;;
esac

cached() { [ "$force" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; }
if cached; then echo "torch build: $tag exists (cached)" >&2; echo "$tag"; exit 0; fi
# One docker build at a time on this machine (the lock docker/build.sh and build-base.sh take);
# the image may have been built while this one waited.
if [ -z "${ATTNBOOK_BUILD_LOCKED:-}" ] && command -v flock >/dev/null; then
  export ATTNBOOK_BUILD_LOCKED=1
  exec flock /tmp/attnbook-docker-build.lock bash "$0" "$@"
fi
# Progress and docker's output go to stderr; stdout gets the tag alone, last.
exec 3>&1 1>&2
if cached; then
  echo "torch build: $tag exists (cached)"
  echo "$tag" >&3
  exit 0
fi
start=$(date +%s)
bash "$here/../build-base.sh" --tag "$base"
echo "torch build: python3-torch=$version on $base -> $tag"
# The context is this folder alone: the image takes nothing from the repository.
docker build --force-rm --network "${DOCKER_BUILD_NETWORK:-host}" -t "$tag" "$here"
echo "torch build: ok tag=$tag time=$(( $(date +%s) - start ))s"
echo "$tag" >&3
