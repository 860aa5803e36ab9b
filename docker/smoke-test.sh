#!/usr/bin/env bash
# smoke-test.sh — build the classroom image and prove it works, end to end, on this machine:
#   1. base image (build-base.sh, skipped when present), then the image (build.sh);
#   2. a container on a random 127.0.0.1 port; JupyterLab answers; a request without the token is
#      refused (403) and one with the token (read from the logs, as a teacher would) succeeds;
#   3. the attnbook kernel is listed in /api/kernelspecs;
#   4. every notebooks/*.ipynb runs headless inside the container through that kernel, by
#      kernel/run.py (the runner of `go run ./kernel run`), and a cell exiting 3 fails;
#   5. the last line: smoke: ok image=... size=... start-to-first-cell=...s notebooks=N/N go=... GOEXPERIMENT=...
# Everything it started is removed on exit. Non-zero exit, with a reason, on any failure.
#
#   docker/smoke-test.sh [--image attnbook:dev] [--no-build] [--keep] [-- extra docker build args]
#
# Offline: the tiny Shakespeare corpus is copied from ../shared/data (next to the repository) into
# docker/data/ for the build and deleted after; without it the build downloads it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=attnbook:dev build=1 keep=0
cell_timeout=${SMOKE_CELL_TIMEOUT:-1200}
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image=$2; shift ;;
    --no-build) build=0 ;;
    --keep) keep=1 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "smoke: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

container="" made_data=0 log=""
fail() { echo "smoke: FAIL $*" >&2; exit 1; }
cleanup() {
  local rc=$?
  if [ -n "$container" ]; then
    if [ "$rc" != 0 ]; then
      echo "--- last container logs ---" >&2; docker logs --tail 40 "$container" >&2 2>&1 || true
    fi
    if [ "$keep" = 1 ]; then echo "smoke: kept container $container" >&2
    else docker rm -f "$container" >/dev/null 2>&1 || true; fi
  fi
  [ "$made_data" = 1 ] && rm -rf "$root/docker/data"
  [ -n "$log" ] && rm -f "$log"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v docker >/dev/null || fail "docker is not installed"
docker info >/dev/null 2>&1 || fail "no docker daemon reachable (docker info failed)"
command -v curl >/dev/null || fail "curl is needed on the host"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

if [ "$build" = 1 ]; then
  "$root/docker/build-base.sh"
  corpus="${ATTNBOOK_DATA:-$root/../shared/data}/tinyshakespeare.txt"
  if [ -f "$corpus" ] && [ ! -e "$root/docker/data/tinyshakespeare.txt" ]; then
    mkdir -p "$root/docker/data" && cp "$corpus" "$root/docker/data/" && made_data=1
  elif [ ! -f "$corpus" ]; then
    echo "smoke: no local corpus at $corpus (set ATTNBOOK_DATA to its folder): the build will try to download it"
  fi
  old=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
  t=$(now)
  "$root/docker/build.sh" -t "$image" "$@" || fail "docker build of $image failed (see above)"
  # The image this tag named before is now untagged: remove it (kept if anything still uses it).
  if [ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "$image")" ]; then
    docker rmi "$old" >/dev/null 2>&1 || true
  fi
  [ "$made_data" = 1 ] && { rm -rf "$root/docker/data"; made_data=0; }
  echo "smoke: built $image in $(secs "$t" "$(now)")s"
else
  docker image inspect "$image" >/dev/null 2>&1 || fail "image $image not found (drop --no-build)"
fi

# Start it the way the README tells a teacher to, on a random loopback port, default token.
t0=$(now)
container=$(docker run -d -p 127.0.0.1::8888 --name "attnbook-smoke-$$" "$image") || fail "docker run failed"
port=$(docker port "$container" 8888/tcp | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p' | head -n1)
[ -n "$port" ] || fail "no published port for 8888"
url="http://127.0.0.1:$port"
for _ in $(seq 1 240); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url/api" || true)
  [ "$code" = 200 ] && break
  [ "$(docker inspect -f '{{.State.Running}}' "$container")" = true ] || fail "container exited before JupyterLab answered"
  sleep 0.25
done
[ "$code" = 200 ] || fail "JupyterLab did not answer on $url/api within 60s"
t_ready=$(now)

token=""
for _ in $(seq 1 40); do
  token=$(docker logs "$container" 2>&1 | sed -n 's/.*[?&]token=\([0-9a-zA-Z]*\).*/\1/p' | head -n1)
  [ -n "$token" ] && break; sleep 0.25
done
[ -n "$token" ] || fail "no token URL in the container logs"
[ "${#token}" -ge 32 ] || fail "token in the logs is too short to be a random token: ${#token} chars"

code=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/kernelspecs")
[ "$code" = 403 ] || fail "GET /api/kernelspecs without a token answered $code, want 403"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token wrong$token" "$url/api/kernelspecs")
[ "$code" = 403 ] || fail "GET /api/kernelspecs with a wrong token answered $code, want 403"
specs=$(curl -s -f -H "Authorization: token $token" "$url/api/kernelspecs") || fail "GET /api/kernelspecs with the token failed"
echo "$specs" | grep -q '"attnbook"' || fail "the attnbook kernel is not in /api/kernelspecs: $specs"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/lab?token=$token")
[ "$code" = 200 ] || fail "GET /lab?token=... answered $code, want 200"
env=$(docker exec "$container" go env GOPROXY GOFLAGS GOTOOLCHAIN GOEXPERIMENT | tr '\n' ' ')
[ "$env" = "off -mod=readonly local simd " ] || fail "run-time Go env is '$env', want 'off -mod=readonly local simd'"
[ "$(docker exec "$container" id -u):$(docker exec "$container" id -g)" = 1000:100 ] || fail "container does not run as 1000:100"
echo "smoke: JupyterLab up in $(secs "$t0" "$t_ready")s on $url; token auth ok; attnbook kernel listed"

# Every notebook, in order, through the installed kernel, inside the container, by the runner
# `go run ./kernel run` uses (kernel/run.py, from this checkout): a cell fails on an error output
# or when its program exits non-zero. Its JSON events are summarised by smoke_report below.
smoke_report() { # reads run.py's events; prints one line per notebook and per failed cell
  python3 -c '
import json, sys
first = True
for line in sys.stdin:
    try: ev = json.loads(line)
    except ValueError: print(line, end=""); continue
    e = ev.get("event")
    if e == "cell" and not ev["ok"]:
        print("smoke:   cell %d FAILED: %s: %s" % (ev["index"] + 1, ev.get("ename"), (ev.get("evalue") or "")[:300]))
    elif e == "notebook" and "ok" in ev:
        print("smoke: %s %s" % ("ok  " if ev["ok"] else "FAIL", ev["notebook"]))
    if e == "cell" and first:
        print("first-cell-epoch=%.3f" % ev["epoch"])
        first = False
    if e == "fatal":
        print("smoke:   fatal: %s" % ev["message"])
    elif e == "done":
        print("smoke: notebooks ok %d/%d" % (ev["ok"], ev["total"]))
'
}
mapfile -t nbs < <(docker exec "$container" sh -c 'ls "$ATTNBOOK_ROOT"/notebooks/*.ipynb 2>/dev/null | sort')
[ "${#nbs[@]}" -gt 0 ] || fail "no notebooks/*.ipynb in the image (expected at least notebooks/00_start_here.ipynb)"
log=$(mktemp)
set +e
docker exec -i "$container" python3 - --kernel attnbook --timeout "$cell_timeout" "${nbs[@]}" <"$root/kernel/run.py" 2>&1 \
  | tee "$log.events" | smoke_report | tee "$log"
rc=${PIPESTATUS[0]}
set -e
first=$(sed -n 's/^first-cell-epoch=//p' "$log" | head -n1)
nok=$(grep -c '^smoke: ok ' "$log" || true)
rm -f "$log.events"
[ "$rc" = 0 ] || fail "notebooks: $nok/${#nbs[@]} ran clean (see the smoke: lines above)"
[ -n "$first" ] || fail "no code cell was executed"

# The same runner must fail a cell whose program exits non-zero (GoNB reports only "exit status 3"
# on stderr): a notebook made here, run in the container.
docker exec -i "$container" sh -c 'cat >/tmp/smoke-exit3.ipynb' <<'NB'
{"cells": [{"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [],
  "source": "import \"os\"\n\nfunc main() { os.Exit(3) }"}],
 "metadata": {"kernelspec": {"name": "attnbook", "display_name": "Go (attnbook)", "language": "go"}},
 "nbformat": 4, "nbformat_minor": 5}
NB
set +e
exit3=$(docker exec -i "$container" python3 - --kernel attnbook --timeout 300 /tmp/smoke-exit3.ipynb <"$root/kernel/run.py" 2>&1)
rc=$?
set -e
[ "$rc" = 1 ] || fail "a cell that exits 3 gave runner exit $rc, want 1: $exit3"
echo "$exit3" | grep -q '"ename": "exit status 3"' || fail "the runner did not report the cell's exit status 3: $exit3"
echo "smoke: a cell exiting non-zero fails (exit status 3)"

size=$(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.2fGB", $1 / 1e9 }')
simd=$(docker exec "$container" go env GOEXPERIMENT)
echo "smoke: ok image=$image size=$size start-to-first-cell=$(secs "$t0" "$first")s notebooks=$nok/${#nbs[@]} go=$(docker exec "$container" go env GOVERSION) GOEXPERIMENT=$simd"
