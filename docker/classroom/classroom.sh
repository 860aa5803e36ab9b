#!/usr/bin/env bash
# classroom.sh — run a class on one server: JupyterHub with the attnbook image, one Unix user per
# student. See docker/classroom/README.md.
#
#   classroom.sh up [--class FILE]      build the hub image if missing, start the hub, print logins
#   classroom.sh down                   stop the hub and every student's server (files are kept)
#   classroom.sh status | logs | passwords
#   classroom.sh reset-password NAME    firstuse login: NAME sets a new password at next login
#   classroom.sh build                  (re)build the hub image from the attnbook image
#   classroom.sh destroy --yes          down, then delete the volumes: ALL students' files
#
# Settings: environment variables, or docker/classroom/classroom.env (KEY=value lines, read first):
#   CLASSROOM_CLASS          class list file (default docker/classroom/class.txt)
#   CLASSROOM_NAME           container and volume prefix (default attnbook-classroom)
#   CLASSROOM_PORT           host port (default 8000); CLASSROOM_BIND address (default 127.0.0.1;
#                            0.0.0.0 for a class on the LAN, behind TLS — see README)
#   CLASSROOM_IMAGE          hub image (default attnbook-classroom:dev), built FROM ATTNBOOK_IMAGE
#                            (default attnbook:dev, made by docker/build.sh)
#   CLASSROOM_TEACHER        teacher (admin) user name (default teacher)
#   CLASSROOM_AUTH           firstuse (default) or shared
#   CLASSROOM_IDLE_TIMEOUT   seconds of inactivity before a student's server stops (default 3600)
#   CLASSROOM_CULL_EVERY     seconds between idle checks (default 60)
#   CLASSROOM_TEACHER_PASSWORD, CLASSROOM_STUDENT_PASSWORD   else generated once, kept in the hub volume
#   CLASSROOM_MEMORY, CLASSROOM_CPUS   docker --memory / --cpus for the whole class (default: none)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC1091
[ -f "$here/classroom.env" ] && { set -a; . "$here/classroom.env"; set +a; }
name=${CLASSROOM_NAME:-attnbook-classroom}
image=${CLASSROOM_IMAGE:-attnbook-classroom:dev}
base=${ATTNBOOK_IMAGE:-attnbook:dev}
port=${CLASSROOM_PORT:-8000}
bind=${CLASSROOM_BIND:-127.0.0.1}
class=${CLASSROOM_CLASS:-$here/class.txt}

say() { echo "classroom: $*"; }
die() { echo "classroom: $*" >&2; exit 1; }
command -v docker >/dev/null || die "docker is not installed"

running() { [ "$(docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ]; }
secret() { docker exec "$name" cat "/srv/jupyterhub/secrets/$1" 2>/dev/null; }

build() {
  docker image inspect "$base" >/dev/null 2>&1 || die "the attnbook image $base is missing: build it first with docker/build.sh -t $base"
  say "building $image FROM $base"
  docker build --force-rm --network "${DOCKER_BUILD_NETWORK:-host}" --build-arg "ATTNBOOK_IMAGE=$base" \
    -t "$image" -f "$here/Dockerfile" "$here"
}

show_logins() {
  local url="http://$bind:$port"; [ "$bind" = 0.0.0.0 ] && url="http://$(hostname -f 2>/dev/null || hostname):$port"
  say "up: $url  (teacher: ${CLASSROOM_TEACHER:-teacher}, admin page $url/hub/admin)"
  say "teacher password: $(secret teacher-password)"
  if [ "${CLASSROOM_AUTH:-firstuse}" = shared ]; then
    say "students log in with their class-list name and the class password: $(secret student-password)"
  else
    say "students log in with their class-list name; the password they type the first time becomes theirs (8+ characters)"
  fi
}

up() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --class) class=$2; shift ;;
      *) die "up: unknown argument $1" ;;
    esac
    shift
  done
  [ -f "$class" ] || die "no class list at $class: copy $here/class.example.txt to $here/class.txt and edit it, or pass --class FILE"
  class=$(cd "$(dirname "$class")" && pwd)/$(basename "$class")
  if running; then say "$name is already running (classroom.sh down first to restart it)"; show_logins; return; fi
  docker rm "$name" >/dev/null 2>&1 || true
  docker image inspect "$image" >/dev/null 2>&1 || build
  local envs=() v
  for v in CLASSROOM_TEACHER CLASSROOM_AUTH CLASSROOM_IDLE_TIMEOUT CLASSROOM_CULL_EVERY \
           CLASSROOM_TEACHER_PASSWORD CLASSROOM_STUDENT_PASSWORD CLASSROOM_SPAWN_LIMIT CLASSROOM_ACTIVE_LIMIT; do
    [ -n "${!v:-}" ] && envs+=(-e "$v=${!v}")
  done
  local limits=()
  [ -n "${CLASSROOM_MEMORY:-}" ] && limits+=(--memory "$CLASSROOM_MEMORY")
  [ -n "${CLASSROOM_CPUS:-}" ] && limits+=(--cpus "$CLASSROOM_CPUS")
  docker run -d --name "$name" --hostname "$name-$(date +%s)" \
    -p "$bind:$port:8000" \
    -v "$name-home:/home/class" -v "$name-hub:/srv/jupyterhub" \
    -v "$class:/etc/attnbook-classroom/class.txt:ro" \
    --stop-timeout 60 --restart unless-stopped "${envs[@]}" "${limits[@]}" \
    "$image" >/dev/null
  local code=""
  for _ in $(seq 1 240); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/hub/health" 2>/dev/null || true)
    [ "$code" = 200 ] && break
    running || { docker logs --tail 30 "$name" >&2; die "the hub container exited (logs above)"; }
    sleep 0.5
  done
  [ "$code" = 200 ] || { docker logs --tail 30 "$name" >&2; die "the hub did not answer on port $port within 120s"; }
  show_logins
}

down() {
  docker inspect "$name" >/dev/null 2>&1 || { say "$name is not running"; return; }
  # SIGTERM: JupyterHub stops every student's server, then itself (60 s before a SIGKILL).
  docker stop -t 60 "$name" >/dev/null
  docker rm "$name" >/dev/null
  say "stopped $name; homes kept in volume $name-home, hub state in $name-hub"
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  restart) down; up "$@" ;;
  build) build ;;
  status)
    running || die "$name is not running"
    docker exec "$name" sh -c 'ps -eo user:20,rss,etime,args --sort=user | grep -E "jupyterhub|gonb|configurable" | grep -v grep' || true
    docker stats --no-stream "$name" ;;
  logs) docker logs "$@" "$name" ;;
  passwords) running || die "$name is not running"; show_logins ;;
  reset-password)
    [ $# = 1 ] || die "usage: classroom.sh reset-password NAME"
    running || die "$name is not running"
    docker exec -i "$name" python3 - "$1" <<'PY'
import json, os, sys
p = "/srv/jupyterhub/passwords.json"
h = json.load(open(p)) if os.path.exists(p) else {}
if h.pop(sys.argv[1], None) is None:
    sys.exit("classroom: %s has no password set" % sys.argv[1])
tmp = p + ".tmp"
with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(h, f, indent=1, sort_keys=True)
os.replace(tmp, p)
print("classroom: %s's password forgotten: their next login sets a new one" % sys.argv[1])
PY
    ;;
  destroy)
    [ "${1:-}" = --yes ] || die "destroy deletes every student's files: classroom.sh destroy --yes"
    down; docker volume rm "$name-home" "$name-hub" ;;
  *) sed -n '2,24p' "$0"; [ -z "$cmd" ] || exit 2 ;;
esac
