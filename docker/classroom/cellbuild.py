#!/usr/bin/env python3
"""cellbuild.py — identical notebook cells compile once for the whole class, safely.

Every GoNB cell is a Go program: `go build -o BINARY` of the cell (main.go, go.mod, go.sum) in the
kernel's temporary module. In a class, thirty students run the same cells of the same notebook
within minutes, and each build (compile the cell, link it with GoMLX) costs about a CPU-second.

  cellbuild.py serve          the class's builder (classroom-start.sh runs it as the `cellbuild`
                              user): answers build requests on $SOCKET
  cellbuild.py build BINARY   (the kernels' `go` wrapper runs it for `go build -o BINARY`): asks
                              the builder for the cell in the current directory and writes BINARY.
                              Exit 0: built; 1: the build failed (go's message on stderr); 3: not
                              a cell the builder takes (the wrapper then runs go build itself)

Safety: only the builder writes its cache, and it only ever stores what it compiled itself from
the source it was sent, under the SHA-256 of that source (every file, with the module name made
the same for everyone), of the go version and of every Go setting that changes a build. A
student can neither put a binary in the cache nor get one built from other source than their
own: two students share a binary only when their cells are the same program. The builder runs
as its own user, with its own Go build cache, and reads no student's files (the request carries
the source). It takes only plain cells: main.go and other top-level .go files, go.mod and go.sum,
no go.work, no subdirectories, replace directives only to the course's repository, and the
class's build settings (GOFLAGS, GOEXPERIMENT, CGO_ENABLED=0, ...) unchanged; anything else
builds in the student's kernel as before. Compiling runs no code of the cell (no cgo, no
-toolexec, GOPROXY=off, GOTOOLCHAIN=local).

The cache keeps the most recently used binaries up to $CELLBUILD_CACHE_MB (default 3072).
"""
import asyncio
import grp
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SOCKET = os.environ.get("CELLBUILD_SOCKET", "/run/attnbook-cellbuild/socket")
CACHE = os.environ.get("CELLBUILD_CACHE", "/var/cache/attnbook/cells")
WORK = os.environ.get("CELLBUILD_WORK", "/var/lib/cellbuild/work")
KERNEL_SPEC = os.environ.get("CELLBUILD_KERNEL_SPEC", "/usr/local/share/jupyter/kernels/attnbook/kernel.json")
CACHE_MB = int(os.environ.get("CELLBUILD_CACHE_MB", "3072"))
MODULE = "gonb_cell"  # every cell's module name, for the key and the build
MAX_BYTES = 2 << 20  # a request's source, at most
PARALLEL = int(os.environ.get("CELLBUILD_PARALLEL", str(max(1, (os.cpu_count() or 2) // 2))))

# Environment variables that do not change what `go build` makes (paths of caches, run-time
# settings of the cell's program, network settings with GOPROXY=off). Every other GO*/CGO_*
# variable must be as the class's kernel spec sets it, or the builder says no.
IGNORED = {"GOCACHE", "GOPATH", "GOMODCACHE", "GOTRACEBACK", "GOPROXY", "GOSUMDB", "GONOSUMDB",
           "GOPRIVATE", "GONOPROXY", "GOINSECURE", "GOENV", "GOTELEMETRY", "GOTELEMETRYDIR",
           "GOROOT", "GOMAXPROCS", "GOGC", "GOMEMLIMIT"}


def build_env(environ):
    """The GO*/CGO_* settings of environ that change a build (GOMLX_* and GONB_*, which GoNB sets
    for the cell's program, are run-time only)."""
    return {k: v for k, v in environ.items()
            if (k.startswith("GO") or k.startswith("CGO_")) and k not in IGNORED
            and not k.startswith("GOMLX_") and not k.startswith("GONB_")}


def normalize_gomod(text):
    """go.mod with the module line made MODULE; None when it has a directive the builder refuses."""
    out = []
    root = os.environ.get("ATTNBOOK_ROOT", "/home/jovyan/attnbook")
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("module "):
            out.append("module " + MODULE)
            continue
        if s.startswith("toolchain") or s.startswith("tool ") or s.startswith("tool("):
            return None
        if s.startswith("replace") or "=>" in s:
            # Only the course's repository (GoNB's module replaces it by the image's copy).
            m = re.search(r"=>\s*(\S+)\s*$", s)
            if not m or m.group(1) != root:
                return None
        out.append(line)
    return "\n".join(out) + "\n"


def read_cell(d):
    """The cell in directory d as {name: text} (go.mod normalized), or (None, why)."""
    files, total = {}, 0
    for e in os.scandir(d):
        if e.is_dir(follow_symlinks=False):
            if e.name.startswith("."):
                continue
            return None, "a subdirectory (%s)" % e.name
        if e.name == "go.work" or e.name == "go.work.sum":
            return None, "a go.work"
        if not (e.name.endswith(".go") or e.name in ("go.mod", "go.sum")):
            continue
        if e.is_symlink() or not e.is_file():
            return None, "%s is not a plain file" % e.name
        with open(e.path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        total += len(data)
        if total > MAX_BYTES:
            return None, "more than %d bytes of source" % MAX_BYTES
        try:
            files[e.name] = data.decode()
        except UnicodeDecodeError:
            return None, "%s is not UTF-8" % e.name
    if "go.mod" not in files or "main.go" not in files:
        return None, "no go.mod or main.go"
    return files, ""


def key_of(files, env, goversion):
    h = hashlib.sha256()
    h.update(json.dumps({"go": goversion, "env": sorted(env.items()),
                         "files": sorted(files.items())}, separators=(",", ":")).encode())
    return h.hexdigest()


# --- client (a student's kernel) ---------------------------------------------------------------
def client_build(binary):
    files, why = read_cell(".")
    if files is None:
        return 3, why
    module = re.search(r"^module\s+(\S+)", files["go.mod"], re.M)
    req = {"files": files, "env": build_env(os.environ), "module": module.group(1) if module else ""}
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(SOCKET)
        s.sendall(json.dumps(req).encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        s.close()
        res = json.loads(data)
    except (OSError, ValueError) as e:
        return 3, "no builder (%s)" % e
    if res.get("status") == "ok":
        tmp = binary + ".cellbuild"
        shutil.copyfile(res["path"], tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, binary)
        return 0, ""
    if res.get("status") == "failed":
        sys.stderr.write(res.get("output", ""))
        return 1, ""
    return 3, res.get("why", "refused")


# --- the builder -------------------------------------------------------------------------------
class Builder:
    def __init__(self):
        spec = json.load(open(KERNEL_SPEC))
        env = dict(os.environ)
        for k, v in spec.get("env", {}).items():
            env[k] = v.replace("${PATH}", os.environ.get("PATH", ""))
        env["HOME"] = os.path.dirname(WORK)
        self.env = env
        self.want = build_env(env)
        self.go = shutil.which("go", path=env["PATH"]) or "/usr/local/go/bin/go"
        # The kernel's PATH starts with its `go` shim; the builder runs the real go.
        goroot = subprocess.run([self.go, "env", "GOROOT"], env=env, capture_output=True, text=True).stdout.strip()
        self.go = os.path.join(goroot, "bin", "go")
        self.goversion = subprocess.run([self.go, "version"], env=env, capture_output=True, text=True).stdout.strip()
        self.inflight = {}
        self.sem = asyncio.Semaphore(PARALLEL)
        self.stats = {"requests": 0, "hits": 0, "builds": 0, "failed": 0, "refused": 0, "shared_waits": 0}
        os.makedirs(CACHE, exist_ok=True)
        os.makedirs(WORK, exist_ok=True)
        log("serving %s: %s, settings %s, cache %s (%d MB), %d builds at a time"
            % (SOCKET, self.goversion, " ".join("%s=%s" % kv for kv in sorted(self.want.items())), CACHE, CACHE_MB, PARALLEL))

    def check(self, req):
        files, env = req.get("files"), req.get("env")
        if not isinstance(files, dict) or not isinstance(env, dict):
            return None, "bad request"
        if env != self.want:
            diff = sorted(set(env.items()) ^ set(self.want.items()))
            return None, "build settings differ from the class's: %s" % diff[:4]
        for name, text in files.items():
            if not isinstance(text, str) or "/" in name or name.startswith(".") or not (
                    name.endswith(".go") or name in ("go.mod", "go.sum")):
                return None, "file %r" % name
        if sum(len(t) for t in files.values()) > MAX_BYTES:
            return None, "too much source"
        gomod = normalize_gomod(files.get("go.mod", ""))
        if gomod is None or "main.go" not in files:
            return None, "go.mod has a directive the builder does not take, or no main.go"
        files = dict(files, **{"go.mod": gomod})
        return files, ""

    async def handle(self, reader, writer):
        try:
            data = await reader.read(-1)  # the client shuts its side down after the request
            req = json.loads(data)
            res = await self.request(req)
        except Exception as e:  # a bad request never stops the builder
            res = {"status": "refused", "why": "%s: %s" % (type(e).__name__, e)}
        try:
            writer.write(json.dumps(res).encode())
            await writer.drain()
        finally:
            writer.close()

    async def request(self, req):
        self.stats["requests"] += 1
        files, why = self.check(req)
        if files is None:
            self.stats["refused"] += 1
            return {"status": "refused", "why": why}
        key = key_of(files, self.want, self.goversion)
        path = os.path.join(CACHE, key)
        if os.path.exists(path):
            self.stats["hits"] += 1
            os.utime(path)
            return {"status": "ok", "path": path}
        fut = self.inflight.get(key)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self.inflight[key] = fut
            try:
                fut.set_result(await self.build(key, files))
            except Exception as e:
                fut.set_result({"status": "refused", "why": "build: %s: %s" % (type(e).__name__, e)})
            finally:
                del self.inflight[key]
        else:
            self.stats["shared_waits"] += 1
        res = dict(await fut)
        if res.get("status") == "failed":
            module = req.get("module", "")
            if re.fullmatch(r"[A-Za-z0-9_.-]+", module or ""):
                res["output"] = res["output"].replace(MODULE, module)
        return res

    async def build(self, key, files):
        async with self.sem:
            d = tempfile.mkdtemp(prefix="cell-", dir=WORK)
            try:
                for name, text in files.items():
                    with open(os.path.join(d, name), "w") as f:
                        f.write(text)
                t = time.monotonic()
                proc = await asyncio.create_subprocess_exec(
                    self.go, "build", "-o", "cell", cwd=d, env=self.env,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
                out, _ = await proc.communicate()
                secs = time.monotonic() - t
                if proc.returncode != 0:
                    self.stats["failed"] += 1
                    return {"status": "failed", "output": out.decode(errors="replace")}
                os.chmod(os.path.join(d, "cell"), 0o755)
                os.replace(os.path.join(d, "cell"), os.path.join(CACHE, key))
                self.stats["builds"] += 1
                log("built %s in %.1fs; %s" % (key[:12], secs, self.stats))
                self.trim()
                return {"status": "ok", "path": os.path.join(CACHE, key)}
            finally:
                shutil.rmtree(d, ignore_errors=True)

    def trim(self):
        entries = []
        for e in os.scandir(CACHE):
            st = e.stat()
            entries.append((st.st_mtime, st.st_size, e.path))
        total = sum(s for _, s, _ in entries)
        for _, size, p in sorted(entries):
            if total <= CACHE_MB << 20:
                break
            os.remove(p)
            total -= size


def log(msg):
    print("cellbuild: " + msg, flush=True)


async def serve():
    b = Builder()
    try:
        os.remove(SOCKET)
    except FileNotFoundError:
        pass
    server = await asyncio.start_unix_server(b.handle, path=SOCKET, limit=MAX_BYTES * 2)
    # The students' group may connect (and the directory lets nobody else reach the socket).
    os.chown(SOCKET, -1, grp.getgrnam(os.environ.get("CELLBUILD_GROUP", "students")).gr_gid)
    os.chmod(SOCKET, 0o660)
    async with server:
        await server.serve_forever()


def main():
    if sys.argv[1:2] == ["serve"]:
        asyncio.run(serve())
    elif sys.argv[1:2] == ["build"] and len(sys.argv) == 3:
        code, why = client_build(sys.argv[2])
        if code == 3 and os.environ.get("CELLBUILD_DEBUG"):
            sys.stderr.write("cellbuild: building here: %s\n" % why)
        sys.exit(code)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
