#!/bin/bash
# classroom-start.sh — the hub container's command (runs as root): make one Unix account per name
# in the class list (plus the teacher), each with a private home on the home volume, then start
# JupyterHub. Run again at every start (`classroom.sh up`): accounts are rebuilt from the class
# list, and a student whose home already exists keeps its files and its UID (the home's owner).
#
# Environment (classroom.sh sets it): CLASSROOM_TEACHER, CLASSROOM_AUTH, CLASSROOM_IDLE_TIMEOUT,
# CLASSROOM_CULL_EVERY, CLASSROOM_TEACHER_PASSWORD / CLASSROOM_STUDENT_PASSWORD (optional: else
# made once and kept in the hub volume), CLASSROOM_CLASS_LIST, CLASSROOM_HOME_ROOT, CLASSROOM_STATE.
set -euo pipefail

STATE=${CLASSROOM_STATE:-/srv/jupyterhub}
HOMES=${CLASSROOM_HOME_ROOT:-/home/class}
CLASS_LIST=${CLASSROOM_CLASS_LIST:-/etc/attnbook-classroom/class.txt}
TEACHER=${CLASSROOM_TEACHER:-teacher}
LIB=${CLASSROOM_LIB:-/usr/local/lib/attnbook-classroom}
NOTEBOOKS=${ATTNBOOK_ROOT:-/home/jovyan/attnbook}/notebooks
FIRST_UID=2000
export CLASSROOM_STATE=$STATE CLASSROOM_HOME_ROOT=$HOMES CLASSROOM_TEACHER=$TEACHER CLASSROOM_LIB=$LIB
# The image's warm Go build cache: copied at start onto the cache volume (the seed), which every
# student's GOCACHE links to (user_go_cache.py).
export CLASSROOM_SEED_GOCACHE=${CLASSROOM_SEED_GOCACHE:-${GOCACHE:-/home/jovyan/.cache/go-build}}

say() { echo "classroom: $*"; }
die() { echo "classroom: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "the hub container must start as root (it makes the students' accounts)"
[ -f "$CLASS_LIST" ] || die "no class list at $CLASS_LIST (classroom.sh up --class FILE mounts one)"

# Students see only their own processes: /proc with hidepid=invisible (root, the hub, sees all).
# Remounting /proc needs CAP_SYS_ADMIN, which this container does not get: classroom.sh up does
# it from a short-lived helper container that shares this one's PID namespace, and the hub
# starts only once it is done (after a reboot, `classroom.sh up` again).
if [ "${CLASSROOM_HIDEPID:-1}" = 1 ]; then
  for i in $(seq 1 100000); do
    grep -q ' /proc proc .*hidepid=\(invisible\|2\)' /proc/mounts && break
    [ $((i % 60)) = 1 ] && say "waiting for /proc to be remounted with hidepid (classroom.sh up does it)"
    sleep 0.5
  done
  say "/proc: hidepid on (a student sees only their own processes)"
else
  say "WARNING: CLASSROOM_HIDEPID=0: students can list each other's processes"
fi

umask 022
mkdir -p "$STATE/secrets" "$HOMES"
chmod 0700 "$STATE" "$STATE/secrets"
chmod 0711 "$HOMES"  # students may enter their own home but not list the others

# Passwords: from the environment when given, else made once and kept in the hub volume.
# `classroom.sh passwords` prints them.
secret() { # file length [value]
  local f=$STATE/secrets/$1
  if [ -n "${3:-}" ]; then printf '%s\n' "$3" >"$f"
  # Letters and digits only: a password that starts with "-" (token_urlsafe's alphabet) reads as an
  # option to command-line tools, and these are typed and passed around by people.
  elif [ ! -s "$f" ]; then python3 -c "import secrets,string,sys; a = string.ascii_letters + string.digits; print(''.join(secrets.choice(a) for _ in range(int(sys.argv[1]))))" "$2" >"$f"
  fi
  chmod 0600 "$f"
}
secret teacher-password 32 "${CLASSROOM_TEACHER_PASSWORD:-}"
secret student-password 12 "${CLASSROOM_STUDENT_PASSWORD:-}"
[ "$(wc -c <"$STATE/secrets/teacher-password")" -gt 16 ] || die "CLASSROOM_TEACHER_PASSWORD must be at least 16 characters"

# The class list: one user name per line; '#' starts a comment. Names are Unix user names.
mapfile -t names < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$CLASS_LIST" | tr 'A-Z' 'a-z' | sed '/^$/d')
[ "${#names[@]}" -gt 0 ] || die "the class list $CLASS_LIST names nobody"
declare -A seen=()
bad=()
for n in "${names[@]}"; do
  if ! [[ $n =~ ^[a-z][a-z0-9_-]{0,30}$ ]]; then bad+=("$n (use a-z, 0-9, _ and -, start with a letter, at most 31)")
  elif [ -n "${seen[$n]:-}" ]; then bad+=("$n (twice)")
  elif [ "$n" = "$TEACHER" ]; then bad+=("$n (that is the teacher's name)")
  elif getent passwd "$n" >/dev/null; then bad+=("$n (a system account of the image)")
  fi
  seen[$n]=1
done
[[ $TEACHER =~ ^[a-z][a-z0-9_-]{0,30}$ ]] && ! getent passwd "$TEACHER" >/dev/null \
  || bad+=("teacher name $TEACHER")
[ "${#bad[@]}" = 0 ] || die "bad names in $CLASS_LIST: ${bad[*]}"

# UIDs: an existing home keeps its owner's UID; new accounts get the next free one from 2000.
next=$FIRST_UID
for h in "$HOMES"/*/; do
  [ -d "$h" ] || continue
  u=$(stat -c %u "$h"); [ "$u" -ge "$next" ] && next=$((u + 1))
done
made=0 kept=0
account() { # name
  local n=$1 home=$HOMES/$1 uid
  if [ -d "$home" ]; then uid=$(stat -c %u "$home"); kept=$((kept + 1))
  else uid=$next; next=$((next + 1)); fi
  getent group "$uid" >/dev/null || groupadd -g "$uid" "$n"
  useradd -u "$uid" -g "$uid" -G students -d "$home" -M -s /bin/bash "$n"
  if [ ! -d "$home" ]; then
    mkdir -p "$home/notebooks" "$home/work"
    chown -R "$uid:$uid" "$home"
    made=$((made + 1))
  fi
  # Go telemetry off (what `go telemetry off` writes): no counters written, and gopls (GoNB's
  # code completion, one per kernel) starts no crash-monitor process (~24 MB each).
  if [ ! -e "$home/.config/go/telemetry/mode" ]; then
    mkdir -p "$home/.config/go/telemetry" && echo off >"$home/.config/go/telemetry/mode"
    chown -R "$uid:$uid" "$home/.config"
  fi
  chown "$uid:$uid" "$home"
  chmod 0700 "$home"
}
for n in "${names[@]}"; do account "$n"; done
account "$TEACHER"
printf '%s\n' "${names[@]}" >"$STATE/class-users.txt"
say "${#names[@]} students + teacher $TEACHER: $made new homes, $kept kept, in $HOMES"
say "login: ${CLASSROOM_AUTH:-firstuse}; idle servers stop after ${CLASSROOM_IDLE_TIMEOUT:-3600}s"

seeded=$(python3 "$LIB/user_go_cache.py" --seed) || die "the Go build cache's seed: $seeded"
say "$seeded"

# The class's cell builder (cellbuild.py): its own user, its own warm Go build cache; students
# (group students) reach it through a socket in a directory only they and it can enter.
say "$(python3 "$LIB/user_go_cache.py" cellbuild)"
mkdir -p /run/attnbook-cellbuild
chown cellbuild:students /run/attnbook-cellbuild; chmod 2750 /run/attnbook-cellbuild
(
  while true; do
    setpriv --reuid cellbuild --regid cellbuild --init-groups -- env HOME=/var/lib/cellbuild \
      GOCACHE=/var/cache/attnbook/go-build/cellbuild python3 "$LIB/cellbuild.py" serve || true
    echo "classroom: cellbuild exited; restarting it" >&2; sleep 1
  done
) &

# The course's notebooks: the image's on first start, then what `classroom.sh update` staged;
# delivered to every home (new students get them all; see course.py for the rule).
python3 "$LIB/course.py" seed "$NOTEBOOKS" | sed 's/^/classroom: /'
python3 "$LIB/course.py" deliver | sed 's/^/classroom: /'

# HTTPS for a class on the network (classroom.sh up --public HOST): nginx (Debian's) on 8443 in
# front of the hub's proxy, with the teacher's certificate (mounted at $TLS_IN) or a self-signed
# one made once for HOST and kept in the hub volume.
if [ -n "${CLASSROOM_PUBLIC_HOST:-}" ]; then
  host=$CLASSROOM_PUBLIC_HOST TLS_IN=/etc/attnbook-classroom/tls
  if [ -f "$TLS_IN/cert.pem" ] && [ -f "$TLS_IN/key.pem" ]; then
    cert=$TLS_IN/cert.pem key=$TLS_IN/key.pem; kind="the teacher's certificate"
  else
    mkdir -p "$STATE/tls"; chmod 0700 "$STATE/tls"
    cert=$STATE/tls/self-signed.pem key=$STATE/tls/self-signed.key; kind="a self-signed certificate"
    if [ ! -s "$cert" ] || [ "$(cat "$STATE/tls/host" 2>/dev/null)" != "$host" ]; then
      if [[ $host =~ ^[0-9.]+$ ]] || [[ $host == *:* ]]; then san="IP:$host"; else san="DNS:$host"; fi
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 825 \
        -subj "/CN=$host/O=attnbook classroom (self-signed)" -addext "subjectAltName=$san" \
        -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -keyout "$key" -out "$cert" 2>/dev/null \
        || die "openssl could not make a certificate for $host"
      echo "$host" >"$STATE/tls/host"
    fi
    chmod 0600 "$key"
  fi
  sed -e "s|@CERT@|$cert|" -e "s|@KEY@|$key|" -e "s|@HTTPS_PORT@|${CLASSROOM_HTTPS_PORT:-443}|" \
    "$LIB/nginx.conf.in" >/etc/nginx/attnbook-classroom.conf
  nginx -t -c /etc/nginx/attnbook-classroom.conf 2>&1 | grep -v 'syntax is ok' | sed 's/^/classroom: /' || true
  nginx -c /etc/nginx/attnbook-classroom.conf || die "nginx did not start"
  say "HTTPS for $host with $kind, SHA-256 fingerprint $(openssl x509 -in "$cert" -noout -fingerprint -sha256 | cut -d= -f2)"
fi

cd "$STATE"
exec jupyterhub -f "$LIB/jupyterhub_config.py" "$@"
