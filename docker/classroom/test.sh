#!/usr/bin/env bash
# test.sh — a class on this machine, end to end, through the hub's and the servers' APIs only:
#   1. the attnbook image (docker/build-base.sh + docker/build.sh when missing), the hub image;
#   2. `classroom.sh up --public 127.0.0.1` with N students (s01..sNN), fresh volumes: HTTPS from
#      nginx with a self-signed certificate on a random port (plain HTTP there redirects);
#   3. client.py class (in a container of the hub image, as nobody, over HTTPS, checking the
#      certificate): every student at once logs in, starts a server and runs
#      notebooks/00_start_here.ipynb through the attnbook kernel; measure.py reads CPU time and
#      memory the moment every first cell is done; isolation checks (API, kernels' probes: homes,
#      /proc hidepid, no shared writable file, solutions unreadable); completion on demand (no
#      gopls before the first request, an answer after it); the teacher opens students' notebooks;
#   4. `classroom.sh update` with a changed 00 and 01 and a new notebook, `classroom.sh solutions
#      give`; client.py course checks the delivery rule in every home;
#   5. client.py notebook: the first M students (--notebook10 M, default all) run notebook 10 with
#      ATTNBOOK_SHORT=1 together (M=0 skips it);
#   6. `classroom.sh down` + `up` (short idle timeout): client.py restart checks tokens, passwords
#      and files survived, then that the idle culler stops every server;
#   7. last line: classroom: ok students=N first-cell-all=…s … (numbers also in --json FILE).
# Everything it started (containers, volumes, files) is removed on exit.
#
#   docker/classroom/test.sh [--students N] [--notebook10 M] [--no-build] [--keep] [--json FILE] [--no-restart]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${CLASSROOM_TEST_STUDENTS:-10} build=1 keep=0 json="" restart=1 nb10=${CLASSROOM_TEST_NOTEBOOK10:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --students) n=$2; shift ;;
    --no-build) build=0 ;;
    --keep) keep=1 ;;
    --json) json=$2; shift ;;
    --no-restart) restart=0 ;;
    --notebook10) nb10=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set/!p}' "$0"; exit 0 ;;
    *) echo "classroom-test: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || { echo "classroom-test: --students must be 2 or more" >&2; exit 2; }
nb10=${nb10:-$n}
[[ $nb10 =~ ^[0-9]+$ ]] && [ "$nb10" -le "$n" ] || { echo "classroom-test: --notebook10 must be 0..$n" >&2; exit 2; }

base=${ATTNBOOK_IMAGE:-attnbook:dev}
image=${CLASSROOM_IMAGE:-attnbook-classroom:dev}
name=attnbook-classroom-test-$$
tmp=$(mktemp -d)
made_data=0
export CLASSROOM_NAME=$name CLASSROOM_IMAGE=$image ATTNBOOK_IMAGE=$base CLASSROOM_BIND=127.0.0.1
export CLASSROOM_TEACHER=teacher CLASSROOM_AUTH=firstuse CLASSROOM_CLASS=$tmp/class.txt
unset CLASSROOM_TEACHER_PASSWORD CLASSROOM_STUDENT_PASSWORD CLASSROOM_MEMORY CLASSROOM_CPUS CLASSROOM_SOLUTIONS \
  CLASSROOM_TEACHER_ACCESS CLASSROOM_HIDEPID CLASSROOM_TLS_CERT CLASSROOM_TLS_KEY CLASSROOM_PUBLIC_BIND

fail() { echo "classroom-test: FAIL $*" >&2; exit 1; }
cleanup() {
  local rc=$?
  if docker inspect "$name" >/dev/null 2>&1; then
    [ "$rc" != 0 ] && { echo "--- last hub logs ---" >&2; docker logs --tail 60 "$name" >&2 2>&1 || true; }
    if [ "$keep" = 1 ]; then echo "classroom-test: kept $name (volumes $name-home, $name-hub, $name-gocache)" >&2
    else docker rm -f "$name" >/dev/null 2>&1 || true; fi
  fi
  docker rm -f "$name-client" >/dev/null 2>&1 || true
  [ "$keep" = 1 ] || docker volume rm "$name-home" "$name-hub" "$name-gocache" >/dev/null 2>&1 || true
  [ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null || true
  [ "$made_data" = 1 ] && rm -rf "$root/docker/data"
  rm -rf "$tmp"
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
  # One image build at a time on this machine (docker/smoke-test.sh may be building the same
  # image): wait for the lock, then build only what is still missing.
  # The same lock docker/build.sh takes; holding it here, tell build.sh and build-base.sh so
  # they do not wait for it themselves.
  exec 9>/tmp/attnbook-docker-build.lock
  flock 9
  export ATTNBOOK_BUILD_LOCKED=1
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    echo "classroom-test: $base missing: building it (docker/build-base.sh, docker/build.sh)"
    "$root/docker/build-base.sh"
    corpus="${ATTNBOOK_DATA:-$root/../shared/data}/tinyshakespeare.txt"
    if [ -f "$corpus" ] && [ ! -e "$root/docker/data/tinyshakespeare.txt" ]; then
      mkdir -p "$root/docker/data" && cp "$corpus" "$root/docker/data/" && made_data=1
    fi
    "$root/docker/build.sh" -t "$base" || fail "docker build of $base failed"
    [ "$made_data" = 1 ] && { rm -rf "$root/docker/data"; made_data=0; }
  fi
  t=$(now)
  "$here/classroom.sh" build >"$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log" >&2; fail "hub image build failed"; }
  echo "classroom-test: hub image $image ready in $(secs "$t" "$(now)")s"
  flock -u 9
  unset ATTNBOOK_BUILD_LOCKED
else
  docker image inspect "$image" >/dev/null 2>&1 || fail "image $image not found (drop --no-build)"
fi

students=$(for i in $(seq 1 "$n"); do printf 's%02d\n' "$i"; done)
{ echo "# test class"; echo "$students"; } >"$tmp/class.txt"
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(freeport) https_port=$(freeport) http_port=$(freeport)
export CLASSROOM_PORT=$port CLASSROOM_HTTPS_PORT=$https_port CLASSROOM_HTTP_PORT=$http_port CLASSROOM_PUBLIC_BIND=127.0.0.1
url=https://127.0.0.1:$https_port
mkdir -p "$tmp/state"; chmod 0777 "$tmp/state"

client() { # phase args...
  docker run --rm --name "$name-client" --network host --user 65534:65534 -w /tmp \
    -v "$tmp/state:/state" -v "$here/client.py:/client.py:ro" --entrypoint python3 "$image" \
    /client.py "$@" --url "$url" --state /state --ca /state/ca.pem 2>&1 | tee "$tmp/client.log" >&2
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || fail "client.py $1 failed: $(grep '^client: FAIL' "$tmp/client.log" | tail -n1)"
  sed -n 's/^client: ok //p' "$tmp/client.log" | tail -n1
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }
measure() { docker exec -i "$name" python3 - "$@" <"$here/measure.py"; }

t=$(now)
"$here/classroom.sh" up --public 127.0.0.1 | sed 's/password: .*/password: (hidden)/'
echo "classroom-test: hub up in $(secs "$t" "$(now)")s: $url (HTTPS, nginx), http://127.0.0.1:$port on the host"
tpw=$(docker exec "$name" cat /srv/jupyterhub/secrets/teacher-password)
[ "${#tpw}" -ge 32 ] || fail "teacher password is ${#tpw} characters, want 32"
docker exec "$name" cat /srv/jupyterhub/tls/self-signed.pem >"$tmp/state/ca.pem"
code=$(curl -s --cacert "$tmp/state/ca.pem" -o /dev/null -w '%{http_code}' "$url/hub/api/users")
[ "$code" = 403 ] || fail "GET $url/hub/api/users without a token answered $code, want 403"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/hub/health" || true)
[ "$code" = 000 ] || fail "$url answered HTTP $code without the self-signed certificate trusted, want a TLS failure"
loc=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$http_port/hub/login")
[ "$loc" = "301 $url/hub/login" ] || fail "plain HTTP on the public port answered '$loc', want '301 $url/hub/login'"
echo "classroom-test: HTTPS: certificate checked, no answer without it, plain HTTP redirects"

# Isolation of the container itself: /proc hidepid, no world-writable file (outside /proc, /sys,
# /dev, and sticky directories such as /tmp), the container holds no extra capability and runs
# with no-new-privileges.
docker exec "$name" grep -q ' /proc proc .*hidepid=invisible' /proc/mounts || fail "/proc is not mounted with hidepid"
ww=$(docker exec "$name" find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o \
      \( ! -type l ! -type d -perm -o+w -print \) -o \( -type d -perm -o+w ! -perm -1000 -print \) | head -n 20)
[ -z "$ww" ] || fail "world-writable files or directories in the hub container: $ww"
[ "$(docker inspect -f '{{.HostConfig.CapAdd}} {{.HostConfig.SecurityOpt}}' "$name")" = "[] [no-new-privileges]" ] \
  || fail "the hub container has capabilities added or lacks no-new-privileges: $(docker inspect -f '{{.HostConfig.CapAdd}} {{.HostConfig.SecurityOpt}}' "$name")"
echo "classroom-test: container: /proc hidepid=invisible, no world-writable file, no added capability, no-new-privileges"

cpu0=$(measure cpu | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_s"])')
# The moment every first cell is done (client.py writes first-cells-done), CPU time and memory.
( while [ ! -e "$tmp/state/first-cells-done" ]; do sleep 0.2; done
  measure >"$tmp/mem-first.json" 2>"$tmp/mem-first.err" || true ) &
watcher=$!
class=$(client class --students "$(echo "$students" | paste -sd, -)" --teacher teacher --teacher-password="$tpw")
[ -e "$tmp/state/first-cells-done" ] || fail "client.py class finished without marking the moment every first cell was done"
wait "$watcher" || true; watcher=""
memfirst=$(cat "$tmp/mem-first.json" 2>/dev/null) || true
[ -n "$memfirst" ] || fail "measure.py at the first cells failed: $(cat "$tmp/mem-first.err" 2>/dev/null)"
echo "classroom-test: at the last first cell: $memfirst"
mem=$(measure) || fail "measure.py failed"
echo "classroom-test: after all of 00 and the checks: $mem"
cpu_first=$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); print(round((m["cpu_s"]-float(sys.argv[2]))/int(sys.argv[3]),1))' "$memfirst" "$cpu0" "$n")
cpu=$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); print(round((m["cpu_s"]-float(sys.argv[2]))/int(sys.argv[3]),1))' "$mem" "$cpu0" "$n")
echo "classroom-test: CPU time per student: ${cpu_first}s until every first cell, ${cpu}s with all of 00 and the checks"
[ "$(field "$mem" servers)" = "$n" ] || fail "measure.py found $(field "$mem" servers) servers, want $n"
[ "$(field "$mem" kernels)" = "$n" ] || fail "measure.py found $(field "$mem" kernels) kernels, want $n"
# Students' servers start without running Node.js (singleuser.py): JupyterLab's failed attempt to
# read yarn's settings printed this line and a Node.js stack trace into the hub's log for each one.
srv_logs=$(docker logs "$name" 2>&1)
if grep -q 'Fail to get yarn configuration' <<<"$srv_logs"; then
  fail "a student's server ran node at its start (JupyterLab's yarn settings): singleuser.py's patch did not apply"
fi
# Every server is a fork of the hub's serverfork.py, which imported JupyterLab once.
[ "$(field "$mem" servers_forked)" = "$n" ] || fail "$(field "$mem" servers_forked) of $n servers are forks of serverfork.py"
grep -q '^serverfork: ready' <<<"$srv_logs" || fail "no 'serverfork: ready' in the hub's log"
! grep -q '^serverfork: request refused' <<<"$srv_logs" || fail "serverfork.py refused a request: $(grep '^serverfork: request refused' <<<"$srv_logs" | head -n1)"
echo "classroom-test: servers: $n forks of serverfork.py ($(grep -m1 -o 'preloaded [0-9]* modules' <<<"$srv_logs"))"
perms=$(docker exec "$name" sh -c 'stat -c "%a %U" /home/class/* | sort | uniq -c')
echo "classroom-test: homes: $(echo "$perms" | tr '\n' ';')"
echo "$perms" | grep -qv ' 700 ' && fail "a home is not mode 0700: $perms"
docker exec "$name" test -f /home/class/teacher/notebooks/08_exercises_solutions.ipynb \
  || fail "the teacher's home lacks the solutions"

# The teacher updates the course: 00 and 01 changed, a new notebook; then hands out the solutions.
mkdir -p "$tmp/course"; cp "$root"/notebooks/*.ipynb "$tmp/course/"
python3 - "$tmp/course" <<'PY'
import json, os, sys
d = sys.argv[1]
for name in ("00_start_here.ipynb", "01_simplified_attention.ipynb"):
    p = os.path.join(d, name)
    nb = json.load(open(p))
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "UPDATED-BY-THE-TEACHER"})
    json.dump(nb, open(p, "w"), indent=1, ensure_ascii=False)
nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "UPDATED-BY-THE-TEACHER: a new notebook"}],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
json.dump(nb, open(os.path.join(d, "99_update_check.ipynb"), "w"), indent=1)
PY
"$here/classroom.sh" update --from "$tmp/course"
"$here/classroom.sh" solutions give
course=$(client course)

nbres="{}"
if [ "$nb10" -gt 0 ]; then
  t=$(now); c0=$(measure cpu | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_s"])')
  nbres=$(client notebook --path notebooks/10_train_a_gpt.ipynb --env ATTNBOOK_SHORT=1 --limit "$nb10")
  c1=$(measure cpu | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_s"])')
  nbres=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["notebook_cpu_s_per_student"]=round((float(sys.argv[3])-float(sys.argv[2]))/int(sys.argv[4]),1); print(json.dumps(r))' "$nbres" "$c0" "$c1" "$nb10")
  echo "classroom-test: notebook 10 (short) for $nb10 students: $nbres"
fi

after="{}"
if [ "$restart" = 1 ]; then
  t=$(now)
  "$here/classroom.sh" down
  CLASSROOM_IDLE_TIMEOUT=30 CLASSROOM_CULL_EVERY=5 "$here/classroom.sh" up --public 127.0.0.1 >/dev/null
  echo "classroom-test: hub restarted (down + up) in $(secs "$t" "$(now)")s; idle timeout now 30s"
  after=$(client restart --cull-within 180)
  # Read the logs whole first: `docker logs | grep -q` fails under pipefail when grep stops
  # reading at its first match and docker logs dies of SIGPIPE.
  hub_logs=$(docker logs "$name" 2>&1)
  grep -q 'idle-culler: stopped' <<<"$hub_logs" || fail "no 'idle-culler: stopped' line in the hub's logs"
fi

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpuname=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
report() { # indent
  python3 - "$class" "$mem" "$after" "$cpu" "$memfirst" "$cpu_first" "$course" "$nbres" "$load" "$cpuname" "$(nproc)" "$1" <<'PY'
import json, sys
c, m, a = (json.loads(x) for x in sys.argv[1:4])
out = {**c, "memory": m, "restart": a, "cpu_s_per_student": float(sys.argv[4]),
       "memory_at_first_cells": json.loads(sys.argv[5]), "cpu_s_per_student_first_cell": float(sys.argv[6]),
       **json.loads(sys.argv[7]), **json.loads(sys.argv[8]),
       "load_avg_after": sys.argv[9], "cpu": sys.argv[10], "cores": int(sys.argv[11])}
mf = out["memory_at_first_cells"]
if mf.get("server_pss_mib_mean") is not None and mf.get("kernel_pss_mib_mean") is not None:
    out["mib_per_student_first_cell"] = round(mf["server_pss_mib_mean"] + mf["kernel_pss_mib_mean"], 1)
if sys.argv[12] == "short":
    out.pop("per_student", None)
    print(json.dumps(out, sort_keys=True))
else:
    print(json.dumps(out, indent=1, sort_keys=True))
PY
}
summary=$(report short)
[ -z "$json" ] || report full >"$json"
echo "classroom-test: $summary"
echo "classroom: ok students=$n first-cell-all=$(field "$class" first_cell_all_s)s" \
  "first-cell-median=$(field "$class" first_cell_median_s)s all-cells=$(field "$class" all_cells_max_s)s" \
  "cpu-per-student-first-cell=${cpu_first}s mib-per-student-first-cell=$(field "$summary" mib_per_student_first_cell)" \
  "server-pss=$(field "$mem" server_pss_mib_mean)MiB kernel-pss=$(field "$mem" kernel_pss_mib_mean)MiB" \
  "container-peak=$(field "$mem" cgroup_peak_mib)MiB cpu-per-student=${cpu}s isolation=$(field "$class" isolation_api_checks)+$(field "$class" isolation_kernel_probes)" \
  "update=$(field "$course" update_checks) notebook10=$(field "$nbres" notebook_students)x$(field "$nbres" notebook_all_s)s" \
  "restart=$([ "$restart" = 1 ] && echo ok || echo skipped) culled-after=$(field "$after" culled_after_s)s load=${load// /,}"
