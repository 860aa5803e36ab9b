# jupyterhub_config.py — the attnbook classroom hub (JupyterHub 5.2 from Debian trixie).
#
# One container: the hub, its proxy (configurable-http-proxy) and one jupyterhub-singleuser
# process per student, each run as that student's own Unix user (LocalProcessSpawner). Everything
# is set by the environment classroom-start.sh exports (see README.md):
#
#   CLASSROOM_TEACHER        the teacher's user name, the hub's only admin (default: teacher)
#   CLASSROOM_AUTH           firstuse (default): a student's first login sets their password;
#                            shared: every student logs in with one class password
#   CLASSROOM_IDLE_TIMEOUT   seconds without activity before a server is stopped (default 3600)
#   CLASSROOM_CULL_EVERY     how often the idle culler looks, seconds (default 60)
#   CLASSROOM_HOME_ROOT      where homes live (a volume; default /home/class)
#   CLASSROOM_STATE          the hub's own volume: database, cookie secret, passwords (/srv/jupyterhub)
#   CLASSROOM_LIB            this directory's scripts inside the image (/usr/local/lib/attnbook-classroom)
import asyncio
import base64
import hashlib
import hmac
import json
import os
import pwd
import re
import socket
import sys

from jupyterhub.auth import Authenticator
from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Unicode

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)

STATE = os.environ.get("CLASSROOM_STATE", "/srv/jupyterhub")
LIB = os.environ.get("CLASSROOM_LIB", "/usr/local/lib/attnbook-classroom")
TEACHER = os.environ.get("CLASSROOM_TEACHER", "teacher")
AUTH_MODE = os.environ.get("CLASSROOM_AUTH", "firstuse")
IDLE_TIMEOUT = int(os.environ.get("CLASSROOM_IDLE_TIMEOUT", "3600"))
CULL_EVERY = int(os.environ.get("CLASSROOM_CULL_EVERY", "60"))
SECRETS = os.path.join(STATE, "secrets")
CLASS_USERS = os.path.join(STATE, "class-users.txt")  # written by classroom-start.sh


def _read_secret(name):
    with open(os.path.join(SECRETS, name)) as f:
        return f.read().strip()


def _students():
    with open(CLASS_USERS) as f:
        return [line.strip() for line in f if line.strip()]


# --- hub ---------------------------------------------------------------------------------------
c.JupyterHub.bind_url = "http://:8000"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.db_url = "sqlite:///" + os.path.join(STATE, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(SECRETS, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = ""
# Stop every student's server when the hub stops (`classroom.sh down`); `up` starts a new
# container, and the students' files are on the home volume.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.JupyterHub.proxy_cmd = ["configurable-http-proxy"]
# Many students start at once at the beginning of a class: let them all spawn.
c.JupyterHub.concurrent_spawn_limit = int(os.environ.get("CLASSROOM_SPAWN_LIMIT", "200"))
c.JupyterHub.active_server_limit = int(os.environ.get("CLASSROOM_ACTIVE_LIMIT", "0"))
c.JupyterHub.shutdown_on_logout = False
c.JupyterHub.template_vars = {"announcement_login": "attnbook classroom: log in with your class user name."}


# --- who may log in ----------------------------------------------------------------------------
def _hash(password, salt=None):
    """scrypt(password) as 'scrypt$salt$hash' (base64)."""
    salt = salt or os.urandom(16)
    h = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return "scrypt$%s$%s" % (base64.b64encode(salt).decode(), base64.b64encode(h).decode())


def _check(stored, password):
    try:
        _, salt, _ = stored.split("$")
        return hmac.compare_digest(stored, _hash(password, base64.b64decode(salt)))
    except ValueError:
        return False


class ClassroomAuthenticator(Authenticator):
    """Class-list logins. The teacher (admin) always has a password of their own
    (secrets/teacher-password). Students, by `mode`:

    - shared: one class password (secrets/student-password), as JupyterHub 5.3's
      SharedPasswordAuthenticator (Debian trixie ships 5.2.1, which lacks it);
    - firstuse: as jupyterhub-firstuseauthenticator (not packaged by Debian): the first login of a
      class-list name sets that student's password (stored scrypt-hashed in passwords.json); later
      logins must match it. `classroom.sh reset-password NAME` forgets it.
    """

    mode = Unicode(AUTH_MODE, config=True, help="firstuse or shared")
    min_password_length = 8
    _lock = asyncio.Lock()

    @property
    def _password_file(self):
        return os.path.join(STATE, "passwords.json")

    def _load(self):
        try:
            with open(self._password_file) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def _save(self, hashes):
        tmp = self._password_file + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(hashes, f, indent=1, sort_keys=True)
        os.replace(tmp, self._password_file)

    async def authenticate(self, handler, data):
        if not data:
            return None
        name = self.normalize_username(data.get("username", ""))
        password = data.get("password", "")
        if not name or not password:
            return None
        if name == TEACHER:
            ok = hmac.compare_digest(password.encode(), _read_secret("teacher-password").encode())
            return name if ok else None
        if name not in self.allowed_users:
            return None
        if self.mode == "shared":
            ok = hmac.compare_digest(password.encode(), _read_secret("student-password").encode())
            return name if ok else None
        async with self._lock:  # firstuse: one login at a time touches passwords.json
            hashes = self._load()
            if name not in hashes:
                if len(password) < self.min_password_length:
                    self.log.warning("first login of %s refused: password shorter than %d",
                                     name, self.min_password_length)
                    return None
                hashes[name] = await asyncio.to_thread(_hash, password)
                self._save(hashes)
                self.log.info("first login of %s: password set", name)
                return name
        ok = await asyncio.to_thread(_check, hashes[name], password)
        return name if ok else None


c.JupyterHub.authenticator_class = ClassroomAuthenticator
c.Authenticator.admin_users = {TEACHER}
c.Authenticator.allowed_users = set(_students()) | {TEACHER}
c.Authenticator.allow_all = False
# Only the class list decides who exists: the teacher adds students there, not in the admin page.
c.Authenticator.allow_existing_users = False


# --- one Unix user per student -----------------------------------------------------------------
def _process_start_key():
    """Identifies this container's life: its host name (a new container per `up`) and pid 1's
    start time. A pid saved in the database by another container means nothing here."""
    with open("/proc/1/stat") as f:
        start = f.read().rsplit(")", 1)[1].split()[19]
    return "%s/%s" % (socket.gethostname(), start)


class ClassroomSpawner(LocalProcessSpawner):
    """LocalProcessSpawner that forgets pids saved by an earlier container (pids are reused in a
    fresh container, so `poll` would find some other process alive)."""

    def load_state(self, state):
        if state.get("boot") != _process_start_key():
            state = {k: v for k, v in state.items() if k != "pid"}
        super().load_state(state)

    def get_state(self):
        state = super().get_state()
        if self.pid:
            state["boot"] = _process_start_key()
        return state

    async def start(self):
        """Starts the student's server, forked by serverfork.py (LocalProcessSpawner would exec
        it: the same command, user, environment and arguments; see _ServerFork), on a port of
        their own, 20000 + uid % 10000.

        JupyterHub's random_port() frees the port it found before the server binds it, so two
        servers started at the same moment can be handed the same port: in the 10-student test
        one server failed to bind and exited, and the hub's route for that student led to another
        student's server (HTTP 404). UIDs are unique (classroom-start.sh), so these ports are
        too, and they sit below the ephemeral range (32768 and up) that kernels' ports come from.
        """
        self.port = 20000 + pwd.getpwnam(self.user.name).pw_uid % 10000
        args = self.get_args()
        self.log.info("Forking %s's server: singleuser.py %s", self.user.name, " ".join(args))
        self.proc = None  # not our child: poll and stop go by self.pid, as after a hub restart
        self.pid = await _SERVER_FORK.spawn(self.user.name, args, self.get_env(), self.log)
        return (self.ip or "127.0.0.1", self.port)


class _ServerFork:
    """The hub's serverfork.py: started at the first spawn (and again if it ever exits), asked
    over its root-only socket for each student's server. It has imported JupyterLab once; a
    student's server is a fork of it instead of a new Python process that imports everything
    again (README: a class of 30's first minute)."""

    SOCKET = "/run/attnbook-classroom/serverfork.sock"

    def __init__(self):
        self._proc = None
        self._lock = asyncio.Lock()

    async def _ensure(self, log):
        if self._proc is not None and self._proc.returncode is None:
            return
        if self._proc is not None:
            log.warning("serverfork.py exited (%s): starting it again", self._proc.returncode)
        # The environment every student's server shares (what the spawner gives them all); each
        # child gets its own full environment from the spawner. HOME points nowhere, so that no
        # import can make a child use a path of this process's.
        env = {k: v for k, v in os.environ.items() if k in c.Spawner.env_keep}
        env.update({k: v for k, v in c.Spawner.environment.items() if isinstance(v, str)})
        env["HOME"] = "/nonexistent"
        try:
            os.unlink(self.SOCKET)
        except FileNotFoundError:
            pass
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, os.path.join(LIB, "serverfork.py"), self.SOCKET,
            env=env, stdin=asyncio.subprocess.DEVNULL, cwd="/")
        for _ in range(1200):  # its imports take a few seconds, more on a loaded machine
            if self._proc.returncode is not None:
                raise RuntimeError("serverfork.py exited (%s) while starting" % self._proc.returncode)
            if os.path.exists(self.SOCKET):
                return
            await asyncio.sleep(0.1)
        raise RuntimeError("serverfork.py not ready after 120 s")

    async def spawn(self, user, args, env, log):
        """Forks USER's server; returns its pid."""
        async with self._lock:
            await self._ensure(log)
            reader, writer = await asyncio.open_unix_connection(self.SOCKET)
            try:
                writer.write((json.dumps({"user": user, "args": args, "env": env}) + "\n").encode())
                await writer.drain()
                reply = json.loads(await reader.readline())
            finally:
                writer.close()
        if "pid" not in reply:
            raise RuntimeError("serverfork.py refused %s's server: %s" % (user, reply.get("error")))
        return reply["pid"]


_SERVER_FORK = _ServerFork()


async def _pre_spawn(spawner):
    """Links the warm Go build cache (the image's, copied on the cache volume) into the student's own
    GOCACHE (root, in the hub)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, os.path.join(LIB, "user_go_cache.py"), spawner.user.name,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError("user_go_cache.py %s failed: %s" % (spawner.user.name, out.decode()[-2000:]))
    spawner.log.info("go cache for %s: %s", spawner.user.name, out.decode().strip())


def _gocache(spawner):
    return "/var/cache/attnbook/go-build/" + spawner.user.name


def _gopath(spawner):
    return os.path.join(pwd.getpwnam(spawner.user.name).pw_dir, "go")


def _runtime_dir(spawner):
    # Short on purpose: a kernel's Unix sockets (KernelManager.transport=ipc, below) are named
    # DIR/kernel-<36-character id>-ipc-N, and a socket path holds at most 107 bytes; Jupyter's
    # default (~/.local/share/jupyter/runtime) would leave room for 16-letter names only.
    return os.path.join(pwd.getpwnam(spawner.user.name).pw_dir, ".jr")


c.JupyterHub.spawner_class = ClassroomSpawner
# Each server runs singleuser.py (jupyterhub-singleuser, without the Node.js run JupyterLab makes
# at start) in a fork of serverfork.py (ClassroomSpawner.start), not Spawner.cmd.
c.Spawner.default_url = "/lab"
c.Spawner.pre_spawn_hook = _pre_spawn
c.Spawner.start_timeout = int(os.environ.get("CLASSROOM_START_TIMEOUT", "300"))
c.Spawner.http_timeout = int(os.environ.get("CLASSROOM_HTTP_TIMEOUT", "300"))
c.Spawner.args = [
    # Nothing at run time reaches the network: no news, no update checks.
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
]
# The image's run-time environment (Go offline settings, GOEXPERIMENT, attnbook paths) goes to
# every student's server and kernels; GOCACHE and GOPATH are each student's own.
_FORWARD = re.compile(r"^(GO[A-Z0-9_]*|ATTNBOOK_[A-Z_]+|GOMLX_[A-Z_]+|CGO_[A-Z_]+|LD_LIBRARY_PATH)$")
_env = {k: v for k, v in os.environ.items() if _FORWARD.match(k)}
_env.update({
    "GOCACHE": _gocache,
    "GOPATH": _gopath,
    "JUPYTER_RUNTIME_DIR": _runtime_dir,
    # The image's corpus copy is read-only and shared by all students.
    "ATTNBOOK_DATA": "/opt/attnbook/data",
    # Report activity to the hub every minute, so the idle culler sees fresh times.
    "JUPYTERHUB_ACTIVITY_INTERVAL": "60",
})
c.Spawner.environment = _env
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL", "TZ"]
# A server with no kernels and no requests for this long exits by itself (the hub notices);
# idle kernels are shut down too. The hub's idle culler (below) is the main mechanism.
c.Spawner.args += [
    "--MappingKernelManager.cull_idle_timeout=%d" % IDLE_TIMEOUT,
    "--MappingKernelManager.cull_interval=%d" % max(CULL_EVERY, 10),
    "--MappingKernelManager.cull_connected=True",
    # Kernels talk to their server over Unix sockets in the student's own runtime directory
    # (~/.jr/kernel-ID-ipc-N), not TCP ports on the shared loopback: 30
    # servers each picking random free ports with no coordination collided (two kernels of 30 died
    # at start, "restarting kernel, new random ports"); sockets in a home cannot collide, and other
    # students cannot connect to them.
    "--KernelManager.transport=ipc",
]

# --- idle culler (a hub-managed service with the least scopes it needs) ------------------------
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, os.path.join(LIB, "idle_culler.py"),
                "--timeout=%d" % IDLE_TIMEOUT, "--every=%d" % CULL_EVERY],
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
# --- the teacher opens any student's server --------------------------------------------------
# The admin page (/hub/admin) lists every student; the teacher (JupyterHub's admin role, which
# holds access:servers) can start a student's server and open it ("access server": their
# notebooks, as the student sees them, able to edit and run them), or go straight to
# /user/NAME/lab. CLASSROOM_TEACHER_ACCESS=none makes the teacher a restricted administrator
# instead: the admin page, starting and stopping servers, no access to their contents. Students
# never get any of this.
TEACHER_ACCESS = os.environ.get("CLASSROOM_TEACHER_ACCESS", "full")
if TEACHER_ACCESS not in ("full", "none"):
    raise ValueError("CLASSROOM_TEACHER_ACCESS=%r: want full or none" % TEACHER_ACCESS)
if TEACHER_ACCESS == "none":
    c.Authenticator.admin_users = set()
    c.JupyterHub.load_roles.append({
        "name": "teacher",
        "description": "The teacher without access to students' servers (classroom)",
        "scopes": ["admin-ui", "admin:servers", "list:users", "read:users", "read:hub"],
        "users": [TEACHER],
    })

# Proxy routes' activity reaches the hub this often (default 300 s).
c.JupyterHub.last_activity_interval = min(300, max(CULL_EVERY, 10))
