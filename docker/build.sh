#!/usr/bin/env bash
# build.sh — build the classroom image from a clean build context: the files git tracks plus the
# untracked ones it does not ignore (so .git, out/, wheels, test binaries never reach the image),
# plus docker/data/ when present (the corpus, see README). Arguments go to `docker build`.
#
#   docker/build.sh -t attnbook:dev [--build-arg WITH_XLA_CPU=1] [--no-cache] ...
#
# $DOCKER_BUILD_NETWORK (default: host) is passed as --network so RUN steps reach Debian's
# mirror and the Go module proxy wherever the daemon's bridge cannot.
# $ATTNBOOK_BUILD_CA (default: host) adds CA certificates the build trusts (not the image) as
# docker/build-ca/*.crt: "host" = /usr/local/share/ca-certificates/*.crt, "none", or file:file.
set -euo pipefail
# One build at a time on this machine: the smoke test, the classroom test and `kernel up -lab`
# may all ask for the image at once (go test runs their packages in parallel); the second waits
# and then finds every layer cached.
if [ -z "${ATTNBOOK_BUILD_LOCKED:-}" ] && command -v flock >/dev/null; then
  export ATTNBOOK_BUILD_LOCKED=1
  exec flock /tmp/attnbook-docker-build.lock bash "$0" "$@"
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
base=$(sed -n 's/^ARG BASE_IMAGE=//p' docker/Dockerfile | head -n1)
if ! docker image inspect "$base" >/dev/null 2>&1 && ! printf '%s\n' "$@" | grep -q '^BASE_IMAGE='; then
  echo "build: base image $base missing: run docker/build-base.sh first" >&2; exit 1
fi
cas=()
case "${ATTNBOOK_BUILD_CA:-host}" in
  none) ;;
  host) for f in /usr/local/share/ca-certificates/*.crt; do [ -f "$f" ] && cas+=("$f"); done ;;
  *) IFS=: read -r -a cas <<<"$ATTNBOOK_BUILD_CA"
     for f in "${cas[@]}"; do [ -f "$f" ] || { echo "build: no CA file $f" >&2; exit 1; }; done ;;
esac
[ "${#cas[@]}" -gt 0 ] && echo "build: the build trusts ${#cas[@]} extra CA certificate(s): ${cas[*]}" >&2

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
for f in "${cas[@]}"; do cp "$f" "$ctx/$(basename "${f%.crt}").crt"; done
{
  git ls-files -z --cached --others --exclude-standard
  [ -d docker/data ] && find docker/data -type f -print0
} | sort -zu | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | { cat; [ "${#cas[@]}" -gt 0 ] && printf '%s\0' "$ctx"/*.crt; true; } \
  | tar --null -T - -c --owner=0 --group=0 --numeric-owner --absolute-names \
      --transform "s|^$ctx/|docker/build-ca/|" \
  | docker build --force-rm --network "${DOCKER_BUILD_NETWORK:-host}" -f docker/Dockerfile "$@" -
