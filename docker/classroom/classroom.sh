#!/usr/bin/env bash
# classroom.sh — run a class on one server: JupyterHub with the attnbook image, one Unix user per
# student. See docker/classroom/README.md.
#
#   classroom.sh up [--class FILE] [--public HOST [--cert FILE --key FILE]]
#                                       build the hub image if missing, start the hub, print logins;
#                                       --public: HTTPS for HOST on port 443 of every interface (nginx)
#   classroom.sh down                   stop the hub and every student's server (files are kept)
#   classroom.sh update [--from DIR]    new and changed notebooks (DIR, default the checkout's
#                                       notebooks/) reach every student; their edits are kept
#   classroom.sh solutions give|hold|status    hand out the exercise solutions (default: held)
#   classroom.sh status | logs | passwords
#   classroom.sh reset-password NAME    firstuse login: NAME sets a new password at next login
#   classroom.sh build                  (re)build the hub image from the attnbook image
#   classroom.sh destroy --yes          down, then delete the volumes: ALL students' files
#
# Settings: environment variables, or docker/classroom/classroom.env (KEY=value lines, read first):
#   CLASSROOM_CLASS          class list file (default docker/classroom/class.txt)
#   CLASSROOM_NAME           container and volume prefix (default attnbook-classroom)
#   CLASSROOM_PORT           host port of the plain-HTTP hub (default 8000) on CLASSROOM_BIND
#                            (default 127.0.0.1: the teacher on this machine, or an SSH tunnel)
#   CLASSROOM_PUBLIC_HOST    what --public sets: the name (or IP) students type
#   CLASSROOM_HTTPS_PORT, CLASSROOM_HTTP_PORT   with --public (default 443 and 80; 80 redirects)
#   CLASSROOM_PUBLIC_BIND    with --public, the address to listen on (default 0.0.0.0)
#   CLASSROOM_TLS_CERT, CLASSROOM_TLS_KEY   PEM files (what --cert/--key set); else self-signed
#   CLASSROOM_IMAGE          hub image (default attnbook-classroom:dev), built FROM ATTNBOOK_IMAGE
#                            (default attnbook:dev, made by docker/build.sh)
#   CLASSROOM_TEACHER        teacher (admin) user name (default teacher)
#   CLASSROOM_TEACHER_ACCESS full (default: the teacher opens students' servers) or none
#   CLASSROOM_AUTH           firstuse (default) or shared
#   CLASSROOM_SOLUTIONS      hold (default) or give: the *_solutions notebooks in students' homes
#   CLASSROOM_IDLE_TIMEOUT   seconds of inactivity before a student's server stops (default 3600)
#   CLASSROOM_CULL_EVERY     seconds between idle checks (default 60)
#   CLASSROOM_TEACHER_PASSWORD, CLASSROOM_STUDENT_PASSWORD   else generated once, kept in the hub volume
#   CLASSROOM_MEMORY, CLASSROOM_CPUS   docker --memory / --cpus for the whole class (default: none)
#   CLASSROOM_HIDEPID        1 (default): students see only their own processes; 0: docker cannot
#                            run the short helper with CAP_SYS_ADMIN that sets it
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
public=${CLASSROOM_PUBLIC_HOST:-}
https_port=${CLASSROOM_HTTPS_PORT:-443}
http_port=${CLASSROOM_HTTP_PORT:-80}
public_bind=${CLASSROOM_PUBLIC_BIND:-0.0.0.0}
cert=${CLASSROOM_TLS_CERT:-}
key=${CLASSROOM_TLS_KEY:-}

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

public_url() {
  local p=":$https_port"; [ "$https_port" = 443 ] && p=""
  echo "https://$1$p"
}

show_logins() {
  local url="http://$bind:$port"; [ "$bind" = 0.0.0.0 ] && url="http://$(hostname -f 2>/dev/null || hostname):$port"
  local pub; pub=$(docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$name" 2>/dev/null | sed -n 's/^CLASSROOM_PUBLIC_HOST=//p')
  if [ -n "$pub" ]; then
    say "up: $(public_url "$pub")  for the class (HTTPS); $url on this machine"
    say "admin page (open any student's notebooks): $(public_url "$pub")/hub/admin"
    local logs; logs=$(docker logs "$name" 2>&1)
    grep -m1 'classroom: HTTPS for' <<<"$logs" || true
    if grep -q 'with a self-signed certificate' <<<"$logs"; then
      say "self-signed: browsers warn (\"not private\") until each student accepts it once; check the"
      say "  fingerprint above matches before accepting. A certificate from your school (--cert/--key) avoids it."
    fi
  else
    say "up: $url  (teacher: ${CLASSROOM_TEACHER:-teacher}, admin page $url/hub/admin)"
  fi
  say "teacher: ${CLASSROOM_TEACHER:-teacher}, password: $(secret teacher-password)"
  if [ "${CLASSROOM_AUTH:-firstuse}" = shared ]; then
    say "students log in with their class-list name and the class password: $(secret student-password)"
  else
    say "students log in with their class-list name; the password they type the first time becomes theirs (8+ characters)"
  fi
}

# protect_proc remounts the hub container's /proc with hidepid=invisible (students see only their
# own processes): a helper container with CAP_SYS_ADMIN joins the hub's PID namespace for one
# `mount` and exits; the hub container itself never holds that capability.
protect_proc() {
  [ "${CLASSROOM_HIDEPID:-1}" = 1 ] || return 0
  docker exec "$name" grep -q ' /proc proc .*hidepid=' /proc/mounts 2>/dev/null && return 0
  docker run --rm --network none --pid "container:$name" --cap-add SYS_ADMIN --cap-add SYS_PTRACE \
    --cap-add SYS_CHROOT --entrypoint nsenter "$image" -t 1 -m -- mount -o remount,hidepid=invisible /proc \
    || die "could not remount the hub's /proc with hidepid (set CLASSROOM_HIDEPID=0 to run without it)"
}

up() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --class) class=$2; shift ;;
      --public) public=$2; shift ;;
      --cert) cert=$2; shift ;;
      --key) key=$2; shift ;;
      *) die "up: unknown argument $1" ;;
    esac
    shift
  done
  [ -f "$class" ] || die "no class list at $class: copy $here/class.example.txt to $here/class.txt and edit it, or pass --class FILE"
  class=$(cd "$(dirname "$class")" && pwd)/$(basename "$class")
  if running; then
    say "$name is already running (classroom.sh down first to restart it)"; protect_proc; show_logins; return
  fi
  docker rm "$name" >/dev/null 2>&1 || true
  docker image inspect "$image" >/dev/null 2>&1 || build
  local envs=() v
  for v in CLASSROOM_TEACHER CLASSROOM_AUTH CLASSROOM_IDLE_TIMEOUT CLASSROOM_CULL_EVERY \
           CLASSROOM_TEACHER_PASSWORD CLASSROOM_STUDENT_PASSWORD CLASSROOM_SPAWN_LIMIT CLASSROOM_ACTIVE_LIMIT \
           CLASSROOM_SOLUTIONS CLASSROOM_TEACHER_ACCESS CLASSROOM_HIDEPID; do
    [ -n "${!v:-}" ] && envs+=(-e "$v=${!v}")
  done
  local limits=() ports=(-p "$bind:$port:8000") mounts=()
  [ -n "${CLASSROOM_MEMORY:-}" ] && limits+=(--memory "$CLASSROOM_MEMORY")
  [ -n "${CLASSROOM_CPUS:-}" ] && limits+=(--cpus "$CLASSROOM_CPUS")
  if [ -n "$public" ]; then
    [[ $public =~ ^[A-Za-z0-9.:-]+$ ]] || die "--public $public: want a host name or an IP address"
    envs+=(-e "CLASSROOM_PUBLIC_HOST=$public" -e "CLASSROOM_HTTPS_PORT=$https_port")
    ports+=(-p "$public_bind:$https_port:8443")
    [ "$http_port" = 0 ] || ports+=(-p "$public_bind:$http_port:8080")
    if [ -n "$cert$key" ]; then
      [ -f "$cert" ] && [ -f "$key" ] || die "--cert and --key: both PEM files are needed (cert '$cert', key '$key')"
      local tls; tls=$(mktemp -d); cp "$cert" "$tls/cert.pem"; cp "$key" "$tls/key.pem"
      docker volume create "$name-tls" >/dev/null
      docker run --rm -v "$name-tls:/t" -v "$tls:/in:ro" --user 0 --entrypoint sh "$image" \
        -c 'cp /in/cert.pem /in/key.pem /t/ && chmod 0600 /t/key.pem' || { rm -rf "$tls"; die "could not store the certificate"; }
      rm -rf "$tls"
      mounts+=(-v "$name-tls:/etc/attnbook-classroom/tls:ro")
    fi
  fi
  docker run -d --name "$name" --hostname "$name-$(date +%s)" \
    "${ports[@]}" --security-opt no-new-privileges \
    -v "$name-home:/home/class" -v "$name-hub:/srv/jupyterhub" -v "$name-gocache:/var/cache/attnbook/go-build" "${mounts[@]}" \
    -v "$class:/etc/attnbook-classroom/class.txt:ro" \
    --stop-timeout 60 --restart unless-stopped "${envs[@]}" "${limits[@]}" \
    "$image" >/dev/null
  protect_proc
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

update() {
  local from=$here/../../notebooks
  while [ $# -gt 0 ]; do
    case "$1" in
      --from) from=$2; shift ;;
      *) die "update: unknown argument $1" ;;
    esac
    shift
  done
  running || die "$name is not running"
  ls "$from"/*.ipynb >/dev/null 2>&1 || die "update: no notebooks (*.ipynb) in $from"
  docker exec "$name" rm -rf /srv/jupyterhub/course.in
  docker exec "$name" mkdir -m 0700 /srv/jupyterhub/course.in
  local f
  for f in "$from"/*.ipynb; do docker cp "$f" "$name:/srv/jupyterhub/course.in/" >/dev/null; done
  docker exec "$name" python3 /usr/local/lib/attnbook-classroom/course.py stage /srv/jupyterhub/course.in | sed 's/^/classroom: /'
  docker exec "$name" rm -rf /srv/jupyterhub/course.in
  docker exec "$name" python3 /usr/local/lib/attnbook-classroom/course.py deliver | sed 's/^/classroom: /'
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
  update) update "$@" ;;
  solutions)
    [ $# = 1 ] && [[ $1 =~ ^(give|hold|status)$ ]] || die "usage: classroom.sh solutions give|hold|status"
    running || die "$name is not running"
    docker exec "$name" python3 /usr/local/lib/attnbook-classroom/course.py solutions "$1" | sed 's/^/classroom: /' ;;
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
    down; docker volume rm "$name-home" "$name-hub"; docker volume rm "$name-gocache" "$name-tls" >/dev/null 2>&1 || true ;;
  *) sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0"; [ -z "$cmd" ] || exit 2 ;;
esac
