#!/usr/bin/env bash
# test.sh — a class on this machine, end to end, through the hub's and the servers' APIs only:
#   1. the attnbook image (docker/build-base.sh + docker/build.sh when missing), the hub image;
#   2. `classroom.sh up` with N students (s01..sNN) on a random loopback port, fresh volumes;
#   3. client.py class (in a container of the hub image, as nobody, over HTTP): every student at
#      once logs in, starts a server and runs notebooks/00_start_here.ipynb through the attnbook
#      kernel; isolation checks; measure.py reads memory while every kernel is up;
#   4. `classroom.sh down` + `up` (short idle timeout): client.py restart checks tokens, passwords
#      and files survived, then that the idle culler stops every server;
#   5. last line: classroom: ok students=N first-cell-all=…s … (numbers also in --json FILE).
# Everything it started (containers, volumes, files) is removed on exit.
#
#   docker/classroom/test.sh [--students N] [--no-build] [--keep] [--json FILE] [--no-restart]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${CLASSROOM_TEST_STUDENTS:-10} build=1 keep=0 json="" restart=1
while [ $# -gt 0 ]; do
  case "$1" in
    --students) n=$2; shift ;;
    --no-build) build=0 ;;
    --keep) keep=1 ;;
    --json) json=$2; shift ;;
    --no-restart) restart=0 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "classroom-test: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || { echo "classroom-test: --students must be 2 or more" >&2; exit 2; }

base=${ATTNBOOK_IMAGE:-attnbook:dev}
image=${CLASSROOM_IMAGE:-attnbook-classroom:dev}
name=attnbook-classroom-test-$$
tmp=$(mktemp -d)
made_data=0
export CLASSROOM_NAME=$name CLASSROOM_IMAGE=$image ATTNBOOK_IMAGE=$base CLASSROOM_BIND=127.0.0.1
export CLASSROOM_TEACHER=teacher CLASSROOM_AUTH=firstuse CLASSROOM_CLASS=$tmp/class.txt
unset CLASSROOM_TEACHER_PASSWORD CLASSROOM_STUDENT_PASSWORD CLASSROOM_MEMORY CLASSROOM_CPUS

fail() { echo "classroom-test: FAIL $*" >&2; exit 1; }
cleanup() {
  local rc=$?
  if docker inspect "$name" >/dev/null 2>&1; then
    [ "$rc" != 0 ] && { echo "--- last hub logs ---" >&2; docker logs --tail 60 "$name" >&2 2>&1 || true; }
    if [ "$keep" = 1 ]; then echo "classroom-test: kept $name (volumes $name-home, $name-hub)" >&2
    else docker rm -f "$name" >/dev/null 2>&1 || true; fi
  fi
  docker rm -f "$name-client" >/dev/null 2>&1 || true
  [ "$keep" = 1 ] || docker volume rm "$name-home" "$name-hub" >/dev/null 2>&1 || true
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
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export CLASSROOM_PORT=$port
url=http://127.0.0.1:$port
mkdir -p "$tmp/state"; chmod 0777 "$tmp/state"

client() { # phase args...
  docker run --rm --name "$name-client" --network host --user 65534:65534 -w /tmp \
    -v "$tmp/state:/state" -v "$here/client.py:/client.py:ro" --entrypoint python3 "$image" \
    /client.py "$@" --url "$url" --state /state 2>&1 | tee "$tmp/client.log" >&2
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || fail "client.py $1 failed: $(grep '^client: FAIL' "$tmp/client.log" | tail -n1)"
  sed -n 's/^client: ok //p' "$tmp/client.log" | tail -n1
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }

t=$(now)
"$here/classroom.sh" up | sed 's/password: .*/password: (hidden)/'
echo "classroom-test: hub up in $(secs "$t" "$(now)")s on $url"
tpw=$(docker exec "$name" cat /srv/jupyterhub/secrets/teacher-password)
[ "${#tpw}" -ge 32 ] || fail "teacher password is ${#tpw} characters, want 32"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/hub/api/users")
[ "$code" = 403 ] || fail "GET /hub/api/users without a token answered $code, want 403"

cpu0=$(docker exec -i "$name" python3 - cpu <"$here/measure.py" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_s"])')
class=$(client class --students "$(echo "$students" | paste -sd, -)" --teacher teacher --teacher-password "$tpw")
mem=$(docker exec -i "$name" python3 - <"$here/measure.py") || fail "measure.py failed"
echo "classroom-test: memory $mem"
cpu=$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); print(round((m["cpu_s"]-float(sys.argv[2]))/int(sys.argv[3]),1))' "$mem" "$cpu0" "$n")
echo "classroom-test: CPU time per student (login, server, kernel, all of 00): ${cpu}s"
[ "$(field "$mem" servers)" = "$n" ] || fail "measure.py found $(field "$mem" servers) servers, want $n"
[ "$(field "$mem" kernels)" = "$n" ] || fail "measure.py found $(field "$mem" kernels) kernels, want $n"
perms=$(docker exec "$name" sh -c 'stat -c "%a %U" /home/class/* | sort | uniq -c')
echo "classroom-test: homes: $(echo "$perms" | tr '\n' ';')"
echo "$perms" | grep -qv ' 700 ' && fail "a home is not mode 0700: $perms"

after="{}"
if [ "$restart" = 1 ]; then
  t=$(now)
  "$here/classroom.sh" down
  CLASSROOM_IDLE_TIMEOUT=30 CLASSROOM_CULL_EVERY=5 "$here/classroom.sh" up >/dev/null
  echo "classroom-test: hub restarted (down + up) in $(secs "$t" "$(now)")s; idle timeout now 30s"
  after=$(client restart --cull-within 180)
  # Read the logs whole first: `docker logs | grep -q` fails under pipefail when grep stops
  # reading at its first match and docker logs dies of SIGPIPE.
  hub_logs=$(docker logs "$name" 2>&1)
  grep -q 'idle-culler: stopped' <<<"$hub_logs" || fail "no 'idle-culler: stopped' line in the hub's logs"
fi

summary=$(python3 - "$class" "$mem" "$after" "$cpu" <<'PY'
import json, sys
c, m, a = (json.loads(x) for x in sys.argv[1:4])
out = {**c, "memory": m, "restart": a, "cpu_s_per_student": float(sys.argv[4])}
out.pop("per_student", None)
print(json.dumps(out, sort_keys=True))
PY
)
[ -z "$json" ] || python3 - "$class" "$mem" "$after" "$cpu" >"$json" <<'PY'
import json, sys
c, m, a = (json.loads(x) for x in sys.argv[1:4])
print(json.dumps({**c, "memory": m, "restart": a, "cpu_s_per_student": float(sys.argv[4])}, indent=1, sort_keys=True))
PY
echo "classroom-test: $summary"
echo "classroom: ok students=$n first-cell-all=$(field "$class" first_cell_all_s)s" \
  "first-cell-median=$(field "$class" first_cell_median_s)s all-cells=$(field "$class" all_cells_max_s)s" \
  "server-pss=$(field "$mem" server_pss_mib_mean)MiB kernel-pss=$(field "$mem" kernel_pss_mib_mean)MiB" \
  "container-peak=$(field "$mem" cgroup_peak_mib)MiB cpu-per-student=${cpu}s isolation=$(field "$class" isolation_api_checks)+$(field "$class" isolation_kernel_probes)" \
  "restart=$([ "$restart" = 1 ] && echo ok || echo skipped) culled-after=$(field "$after" culled_after_s)s"
