#!/usr/bin/env python3
"""serverfork.py SOCKET — starts students' Jupyter servers by forking one process that has already
imported them. Run as root by the hub's spawner (jupyterhub_config.py), one per hub.

Every student's server is the same Python program (singleuser.py: jupyterhub-singleuser with
JupyterLab). Started by exec, each one imports Jupyter Server, JupyterLab, their extensions and
the kernel machinery again before it answers; when a class logs in together, 30 such starts
are most of what the 2 cores do in the first minute (README, Measurements). This process
imports all of it once; then, for each request from the hub — one JSON line on a Unix socket
that only root can open: {"user": NAME, "args": [...], "env": {...}} — it forks a child that
becomes the student as JupyterHub's LocalProcessSpawner makes a server (a new session; the
student's gid, groups and uid; their home as working directory; exactly the environment the
spawner gives) and runs jupyterhub-singleuser's main with the spawner's arguments. It answers
{"pid": N} (or {"error": "..."}). The child's memory is a copy of this process, which never sees
the hub's secrets (its environment is the students' shared part; each child gets its own token
in its environment, as an exec'd server does).

Children are reaped by the kernel (SIGCHLD ignored here, default again in each child), so the
hub, which polls a server by its pid, never sees a zombie. The process exits with the hub
(PR_SET_PDEATHSIG).
"""
import ctypes
import gc
import importlib
import importlib.util
import json
import os
import pwd
import random
import signal
import socket
import sys
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SINGLEUSER = os.path.join(HERE, "singleuser.py")
FIRST_STUDENT_UID = 2000  # classroom-start.sh gives students and the teacher 2000 and up
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4

# Modules a server imports after it starts listening: its first kernel (jupyter_client's
# provisioner and ZMQ sockets), the contents and session APIs, the terminal-free lab handlers.
# Imported here too so that no student pays for them; a missing one is skipped.
LATER_IMPORTS = [
    "jupyter_client.provisioning.local_provisioner",
    "jupyter_client.ioloop",
    "jupyter_client.asynchronous",
    "jupyter_server.services.kernels.connection.channels",
    "jupyter_server.services.kernels.websocket",
    "jupyter_server.services.sessions.sessionmanager",
    "jupyter_server.services.contents.largefilemanager",
    "jupyter_server.services.contents.filecheckpoints",
    "nbformat",
    "nbformat.v4",
    "jsonschema",
]

_libc = ctypes.CDLL(None, use_errno=True)


def log(msg):
    print("serverfork: %s" % msg, file=sys.stderr, flush=True)


def enabled_server_extensions():
    """The jpserver_extensions every student's server loads: the image's
    jupyter_server_config.d files (a student's own ~/.jupyter cannot add to what is preloaded;
    their server still loads whatever they configure, importing it then)."""
    from jupyter_core.paths import jupyter_config_path

    names = []
    for d in reversed(jupyter_config_path()):
        conf_d = os.path.join(d, "jupyter_server_config.d")
        try:
            files = sorted(os.listdir(conf_d))
        except OSError:
            continue
        for f in files:
            if not f.endswith(".json"):
                continue
            try:
                with open(os.path.join(conf_d, f)) as fh:
                    exts = json.load(fh).get("ServerApp", {}).get("jpserver_extensions", {})
            except (OSError, ValueError):
                continue
            names += [n for n, on in exts.items() if on and n not in names]
    return names


def preload():
    """Imports what every server imports; returns jupyterhub-singleuser's main."""
    spec = importlib.util.spec_from_file_location("attnbook_singleuser", SINGLEUSER)
    singleuser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(singleuser)  # its patch of JupyterLab, then jupyterhub.singleuser
    # (as a Jupyter Server extension). Not jupyterlab.labhubapp: importing it patches Jupyter
    # Server's handlers for the older, non-extension way, and the extension's checks then fail.
    import jupyter_server.serverapp  # noqa: F401

    loaded, skipped = [], []
    for name in enabled_server_extensions() + LATER_IMPORTS:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as e:  # an extension that fails here fails (and is reported) in the server
            skipped.append("%s (%s)" % (name, e.__class__.__name__))
    # Forking copies threads' absence, not threads: a thread started by an import would be
    # missing in every child, holding whatever lock it held.
    if threading.active_count() != 1:
        raise RuntimeError("an import started threads: %s" % threading.enumerate())
    log("preloaded %d modules (%s)%s" % (len(sys.modules), ", ".join(loaded),
                                         "; skipped " + ", ".join(skipped) if skipped else ""))
    return singleuser.main


def become(user, env, args, main):
    """In the child: become the student's server. Never returns."""
    code = 1
    try:
        os.setsid()
        for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        pw = pwd.getpwnam(user)
        os.setgid(pw.pw_gid)
        os.setgroups(os.getgrouplist(user, pw.pw_gid))
        os.setuid(pw.pw_uid)
        # An exec after setuid makes a process dumpable again (its /proc files the student's,
        # as hidepid and measure.py expect); without an exec, say so explicitly.
        _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        try:
            os.chdir(pw.pw_dir)
        except OSError as e:
            print("Couldn't set CWD to %s (%s)" % (pw.pw_dir, e), file=sys.stderr)
            os.chdir("/")
        os.environ.clear()
        os.environ.update(env)
        random.seed()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = [SINGLEUSER] + list(args)
        code = main() or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def handle(conn, listener, main):
    """One request: fork a server; answers its pid."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    req = json.loads(data)
    user, args, env = req["user"], req["args"], req["env"]
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise ValueError("args must be a list of strings")
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise ValueError("env must map strings to strings")
    pw = pwd.getpwnam(user)  # KeyError: no such user
    if pw.pw_uid < FIRST_STUDENT_UID:
        raise ValueError("%s is not a class account (uid %d)" % (user, pw.pw_uid))
    pid = os.fork()
    if pid == 0:
        conn.close()
        listener.close()
        become(user, env, args, main)
    return pid


def serve(path):
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() == 1:  # the hub died before prctl
        sys.exit(1)
    main = preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    listener.bind(path + ".new")
    os.umask(old)
    listener.listen(64)
    os.replace(path + ".new", path)  # the hub waits for the path: it appears listening
    # Objects made so far stay out of every collection, here and in the children (gc.freeze): a
    # child's collections then do not write to, and so copy, the pages of everything imported.
    gc.freeze()
    log("ready on %s" % path)
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                reply = {"pid": handle(conn, listener, main)}
            except Exception as e:
                reply = {"error": "%s: %s" % (e.__class__.__name__, e)}
                log("request refused: %s" % reply["error"])
            try:
                conn.sendall((json.dumps(reply) + "\n").encode())
            except OSError:
                pass


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: serverfork.py SOCKET")
    serve(sys.argv[1])
