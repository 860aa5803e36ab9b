#!/usr/bin/env python3
"""client.py — a class of students, driven only through JupyterHub's REST API and the students'
single-user servers' APIs (REST + the Jupyter kernel websocket protocol). Used by test.sh; runs
anywhere with Python 3 and Debian's python3-tornado (the hub image has both).

  client.py class   --url URL --state DIR --students s01,s02,... --teacher NAME --teacher-password PW
  client.py restart --url URL --state DIR [--cull-within SECONDS]

`class`: every student at once logs in (first use: sets their password) and gets a token, starts
a server, opens notebooks/00_start_here.ipynb from their own home, runs its code cells through the
attnbook kernel and saves a file; then the isolation checks, pairwise (student i against i+1) and
from inside kernels. Kernels are left running (test.sh measures memory next).
`restart` (after the hub was restarted): old tokens still work, passwords still hold, each
student's file is still there; then, when --cull-within is given, waits for the idle culler to
stop every server.

Prints progress lines, and a last line `client: ok {json}` (or exits non-zero with `client: FAIL`).
"""
import argparse
import asyncio
import json
import os
import secrets
import sys
import time
import uuid
from urllib.parse import quote, urlencode

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

AsyncHTTPClient.configure(None, max_clients=2000)
HTTP = AsyncHTTPClient()
NOTEBOOK = "notebooks/00_start_here.ipynb"
T0 = time.monotonic()
CA = None  # --ca: the certificate authority that signed the hub's HTTPS certificate
STATE_DIR = None


def log(*a):
    print("[%6.1fs]" % (time.monotonic() - T0), *a, flush=True)


class Fail(Exception):
    pass


async def call(url, method="GET", token=None, body=None, ok=(200, 201, 202, 204)):
    """One HTTP request; returns (code, parsed JSON or None). Raises Fail when code not in ok."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = "token " + token
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    elif method in ("POST", "PUT", "PATCH"):
        data = ""
    req = HTTPRequest(url, method=method, headers=headers, body=data, follow_redirects=False,
                      request_timeout=300, connect_timeout=30, allow_nonstandard_methods=True,
                      ca_certs=CA)
    try:
        r = await HTTP.fetch(req, raise_error=False)
    except Exception as e:
        raise Fail("%s %s: %s: %s" % (method, url, type(e).__name__, e))
    text = r.body.decode(errors="replace") if r.body else ""
    if ok is not None and r.code not in ok:
        raise Fail("%s %s: HTTP %d, want %s: %s" % (method, url, r.code, ok, text[:300]))
    try:
        return r.code, json.loads(text) if text else None
    except ValueError:
        return r.code, text


class Student:
    def __init__(self, url, name, password):
        self.url, self.name, self.password = url, name, password
        self.token = None
        self.kernel_id = None
        self.times = {}
        self.marker = None

    @property
    def hub(self):
        return self.url + "/hub/api"

    @property
    def server(self):
        return "%s/user/%s" % (self.url, quote(self.name))

    async def login(self):
        """Log in with name + password: the hub's token API authenticates the body like its
        login form does, and hands back a token for this student."""
        _, r = await call("%s/users/%s/tokens" % (self.hub, quote(self.name)), "POST",
                          body={"auth": {"username": self.name, "password": self.password},
                                "note": "classroom test", "expires_in": 86400})
        self.token = r["token"]

    async def start_server(self, timeout=600):
        code, _ = await call("%s/users/%s/server" % (self.hub, quote(self.name)), "POST", token=self.token,
                             ok=(201, 202, 400))  # 400: already running
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, u = await call("%s/users/%s" % (self.hub, quote(self.name)), token=self.token)
            s = (u.get("servers") or {}).get("")
            if s and s.get("ready"):
                return
            await asyncio.sleep(0.5)
        raise Fail("%s: server not ready within %ds" % (self.name, timeout))

    async def open_notebook(self, path=NOTEBOOK):
        _, nb = await call("%s/api/contents/%s?content=1" % (self.server, quote(path)), token=self.token)
        return nb["content"]

    async def start_kernel(self, path=NOTEBOOK):
        _, s = await call(self.server + "/api/sessions", "POST", token=self.token,
                          body={"path": path, "type": "notebook", "name": "",
                                "kernel": {"name": "attnbook"}})
        self.kernel_id = s["kernel"]["id"]
        self.kernel = Kernel(self.server, self.kernel_id, self.token)
        await self.kernel.connect()
        await self.kernel.wait_ready()


class Kernel:
    """A kernel through the single-user server's websocket (/api/kernels/ID/channels)."""

    def __init__(self, server, kid, token):
        self.server, self.kid, self.token = server, kid, token
        self.session = uuid.uuid4().hex
        self.ws = None
        self.replies = {}
        self.outputs = {}
        self.waiters = {}
        self.idle = set()
        self.reply_only = set()  # requests done at their shell reply (completion: no outputs)

    def url(self):
        base = self.server.replace("http://", "ws://").replace("https://", "wss://")
        return "%s/api/kernels/%s/channels?%s" % (base, self.kid, urlencode({"session_id": self.session}))

    async def connect(self):
        req = HTTPRequest(self.url(), headers={"Authorization": "token " + self.token},
                          request_timeout=120, connect_timeout=30, ca_certs=CA)
        self.ws = await websocket_connect(req)
        asyncio.ensure_future(self._read())

    async def _read(self):
        """Routes messages: a request is done when its shell reply and its iopub idle status
        (sent after all of its outputs) have both arrived."""
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                for f in self.waiters.values():
                    if not f.done():
                        f.set_exception(Fail("kernel websocket closed"))
                return
            if not isinstance(raw, str):
                continue  # binary frames carry buffers, unused here
            msg = json.loads(raw)
            parent = (msg.get("parent_header") or {}).get("msg_id")
            mtype = msg["header"]["msg_type"]
            if msg.get("channel") == "iopub":
                if mtype in ("stream", "execute_result", "display_data", "error"):
                    self.outputs.setdefault(parent, []).append((mtype, msg["content"]))
                elif mtype == "status" and msg["content"].get("execution_state") == "idle":
                    self.idle.add(parent)
                elif mtype == "status" and msg["content"].get("execution_state") in ("restarting", "dead"):
                    # The server restarted the kernel (e.g. it died at start): what was asked of
                    # the old one will never be answered. JupyterLab tells the student; the test
                    # runs the notebook again, as a student would.
                    for f in self.waiters.values():
                        if not f.done():
                            f.set_exception(Fail("kernel restarted by its server"))
            elif msg.get("channel") == "shell":
                self.replies[parent] = msg["content"]
            f = self.waiters.get(parent)
            if f and not f.done() and parent in self.replies and (parent in self.idle or parent in self.reply_only):
                f.set_result(None)

    async def request(self, msg_type, content, timeout=300, reply_only=False):
        mid = uuid.uuid4().hex
        if reply_only:
            self.reply_only.add(mid)
        msg = {"header": {"msg_id": mid, "username": "", "session": self.session, "msg_type": msg_type,
                          "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
               "parent_header": {}, "metadata": {}, "content": content, "channel": "shell", "buffers": []}
        fut = asyncio.get_event_loop().create_future()
        self.waiters[mid] = fut
        await self.ws.write_message(json.dumps(msg))
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            if mid in self.replies:  # the reply came but no idle status: good enough
                pass
            else:
                raise Fail("no %s reply within %ds" % (msg_type, timeout))
        return self.replies[mid], self.outputs.get(mid, [])

    async def wait_ready(self, timeout=300):
        deadline = time.monotonic() + timeout
        while True:
            try:
                await self.request("kernel_info_request", {}, timeout=10)
                return
            except Fail:
                if time.monotonic() > deadline:
                    raise

    async def complete(self, code):
        reply, _ = await self.request("complete_request", {"code": code, "cursor_pos": len(code)}, timeout=60,
                                      reply_only=True)
        return reply.get("matches") or []

    async def run(self, code, timeout=600):
        reply, outs = await self.request("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True}, timeout=timeout)
        text = "".join(c.get("text", "") for t, c in outs if t == "stream")
        errs = [c for t, c in outs if t == "error"]
        if reply.get("status") != "ok" or errs:
            e = errs[0] if errs else reply
            raise Fail("cell failed: %s: %s\n%s" % (e.get("ename"), e.get("evalue"),
                                                    "\n".join(e.get("traceback", []))[-1500:]))
        return text, outs


FIRST_CELLS = set()
CLASS_SIZE = [0]


async def run_student(st, t_start):
    await st.login()
    st.times["login"] = time.monotonic() - t_start
    await st.start_server()
    st.times["server"] = time.monotonic() - t_start
    nb = await st.open_notebook()
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for c in nb["cells"] if c["cell_type"] == "code"]
    if not cells:
        raise Fail("%s: %s has no code cells" % (st.name, NOTEBOOK))
    await st.start_kernel()
    st.times["kernel"] = time.monotonic() - t_start
    for attempt in range(3):
        try:
            outputs = await run_cells(st, cells, t_start)
            break
        except Fail as e:
            if "kernel restarted by its server" not in str(e) or attempt == 2:
                raise
            st.times["kernel_restarts"] = attempt + 1
            log("%s: the kernel was restarted by its server; running the notebook again" % st.name)
            await asyncio.sleep(2)
            await st.kernel.wait_ready()
    st.times["all_cells"] = time.monotonic() - t_start
    # Real values: the first cell prints the Go version and imports attnbook; the softmax cell
    # prints rows that sum to 1.
    if "Go version: go1." not in outputs[0]:
        raise Fail("%s: first cell printed %r, want 'Go version: go1.…'" % (st.name, outputs[0][:200]))
    await finish_student(st, cells)


async def run_cells(st, cells, t_start):
    outputs = []
    for i, code in enumerate(cells):
        try:
            text, outs = await st.kernel.run(code)
        except Fail as e:
            raise Fail("%s: %s cell %d: %s" % (st.name, NOTEBOOK, i + 1, e))
        outputs.append(text)
        if i == 0:
            st.times["first_cell"] = time.monotonic() - t_start
            FIRST_CELLS.add(st.name)
            if len(FIRST_CELLS) == CLASS_SIZE[0] and STATE_DIR:
                # test.sh measures CPU time and memory the moment every first cell is done.
                with open(os.path.join(STATE_DIR, "first-cells-done"), "w") as f:
                    f.write("%.1f\n" % st.times["first_cell"])
    return outputs


async def finish_student(st, cells):
    # Save a file in the student's home (the contents API writes as the student).
    st.marker = "%s was here %s\n" % (st.name, secrets.token_hex(8))
    await call("%s/api/contents/work/marker.txt" % st.server, "PUT", token=st.token,
               body={"type": "file", "format": "text", "content": st.marker})
    log("%s: login %.1fs server %.1fs kernel %.1fs first cell %.1fs all %d cells %.1fs" % (
        st.name, st.times["login"], st.times["server"], st.times["kernel"], st.times["first_cell"],
        len(cells), st.times["all_cells"]))


async def expect_denied(what, url, method="GET", token=None, body=None):
    code, r = await call(url, method, token=token, body=body, ok=None)
    if code not in (403, 404):
        raise Fail("isolation: %s answered HTTP %d, want 403/404: %s" % (what, code, str(r)[:200]))
    return 1


async def ws_denied(what, st, victim):
    url = Kernel(victim.server, victim.kernel_id, st.token).url()
    try:
        ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": "token " + st.token},
                                                 request_timeout=60, ca_certs=CA))
    except HTTPClientError as e:
        if e.code in (403, 404):
            return 1
        raise Fail("isolation: %s: HTTP %s, want 403/404" % (what, e.code))
    ws.close()
    raise Fail("isolation: %s: the websocket opened" % what)


# Run inside student A's kernel: what can A reach of student B? Prints one line per probe.
PROBE = r'''
import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

%%
victim, victimHome, myHome := "VICTIM", "VHOME", "MYHOME"
try := func(what string, err error) {
	if err == nil {
		fmt.Println("PROBE OPEN", what)
	} else {
		fmt.Println("PROBE DENIED", what, err)
	}
}
st, err := os.Stat(myHome)
if err == nil {
	fmt.Printf("PROBE MODE %s %o\n", myHome, st.Mode().Perm())
}
_, err = os.ReadDir(victimHome)
try("readdir "+victimHome, err)
_, err = os.ReadFile(filepath.Join(victimHome, "notebooks", "00_start_here.ipynb"))
try("read "+victim+"'s notebook", err)
_, err = os.ReadFile(filepath.Join(victimHome, "work", "marker.txt"))
try("read "+victim+"'s marker.txt", err)
err = os.WriteFile(filepath.Join(victimHome, "intruder.txt"), []byte("x"), 0o644)
try("write into "+victim+"'s home", err)
_, err = os.ReadDir("/var/cache/attnbook/go-build/" + victim)
try("readdir "+victim+"'s Go cache", err)
_, err = os.ReadDir(filepath.Dir(victimHome))
try("list all homes", err)
vs, err := os.Stat(victimHome)
if err != nil {
	fmt.Println("PROBE ERROR stat", err)
	return
}
uid := vs.Sys().(*syscall.Stat_t).Uid
fmt.Printf("PROBE MODE %s %o\n", victimHome, vs.Mode().Perm())
// /proc is mounted with hidepid: a student sees their own processes only (not the victim's,
// not root's hub), so cannot read others' command lines, paths or environments.
procs, _ := os.ReadDir("/proc")
mine, others := 0, 0
for _, p := range procs {
	if _, err := strconv.Atoi(p.Name()); err != nil {
		continue
	}
	ps, err := os.Stat("/proc/" + p.Name())
	if err != nil {
		continue
	}
	if owner := ps.Sys().(*syscall.Stat_t).Uid; owner == uint32(os.Getuid()) {
		mine++
	} else {
		others++
		cmd, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		fmt.Printf("PROBE OPEN see process %s of uid %d: %q\n", p.Name(), owner, strings.ReplaceAll(string(cmd), "\x00", " "))
	}
}
fmt.Println("PROBE PROCS", mine, others)
try("signal the container's process 1 (root)", syscall.Kill(1, 0))
// No file shared between students is writable by them: the module cache's lock is read-only.
modcache := os.Getenv("GOMODCACHE")
if modcache == "" {
	modcache = "/home/jovyan/go/pkg/mod"
}
lock, err := os.OpenFile(filepath.Join(modcache, "cache", "lock"), os.O_RDWR, 0)
if err == nil {
	lock.Close()
}
try("open the shared module cache lock for writing", err)
// The exercise solutions are held: the image's copy is not readable by students.
_, err = os.ReadFile(filepath.Join(os.Getenv("ATTNBOOK_ROOT"), "notebooks", "08_exercises_solutions.ipynb"))
try("read the image's exercise solutions", err)
tmps, _ := filepath.Glob("/tmp/*")
for _, t := range tmps {
	ts, err := os.Stat(t)
	if err != nil || ts.Sys().(*syscall.Stat_t).Uid != uid {
		continue
	}
	if ts.IsDir() {
		_, err = os.ReadDir(t)
	} else {
		_, err = os.ReadFile(t)
	}
	try("read "+victim+"'s "+t, err)
}
'''


GOPLS_COUNT = r'''
import (
	"fmt"
	"os"
	"strconv"
)

%%
n := 0
entries, _ := os.ReadDir("/proc")
for _, e := range entries {
	if _, err := strconv.Atoi(e.Name()); err != nil {
		continue
	}
	if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == "/usr/local/lib/attnbook-classroom/gopls" {
		n++
	}
}
fmt.Println("GOPLS", n)
'''


async def gopls_running(st):
    """How many real gopls processes the student's own processes include."""
    text, _ = await st.kernel.run(GOPLS_COUNT)
    for line in text.splitlines():
        if line.startswith("GOPLS "):
            return int(line.split()[1])
    raise Fail("gopls count: no GOPLS line in %r" % text[-500:])


async def kernel_probe(st, victim, home_root):
    code = (PROBE.replace("VICTIM", victim.name).replace("VHOME", "%s/%s" % (home_root, victim.name))
            .replace("MYHOME", "%s/%s" % (home_root, st.name)))
    text, _ = await st.kernel.run(code)
    lines = [l for l in text.splitlines() if l.startswith("PROBE")]
    opened = [l for l in lines if l.startswith("PROBE OPEN")]
    denied = [l for l in lines if l.startswith("PROBE DENIED")]
    modes = [l for l in lines if l.startswith("PROBE MODE")]
    procs = [(int(l.split()[2]), int(l.split()[3])) for l in lines if l.startswith("PROBE PROCS")]
    if opened:
        raise Fail("isolation: %s reached %s:\n%s" % (st.name, victim.name, "\n".join(opened)))
    if len(modes) != 2 or any(not m.endswith(" 700") for m in modes):
        raise Fail("isolation: homes are not mode 0700: %s\n%s" % (modes, text[-2000:]))
    if not procs or procs[0][0] < 2 or procs[0][1] != 0:
        raise Fail("isolation: %s's kernel saw %s (own, others') processes, want >= 2 own (server, kernel) "
                   "and no one else's: %s" % (st.name, procs, text[-1500:]))
    if len(denied) < 9:
        raise Fail("isolation: too few probes denied (%d):\n%s" % (len(denied), text[-2000:]))
    return len(denied)


async def phase_class(a):
    names = a.students.split(",")
    CLASS_SIZE[0] = len(names)
    students = [Student(a.url, n, "pw-%s-%s" % (n, secrets.token_hex(6))) for n in names]
    t_start = time.monotonic()
    log("class: %d students log in, start servers and run %s at once" % (len(students), NOTEBOOK))
    results = await asyncio.gather(*(run_student(s, t_start) for s in students), return_exceptions=True)
    bad = [(s.name, r) for s, r in zip(students, results) if isinstance(r, Exception)]
    if bad:
        raise Fail("%d/%d students failed; first: %s: %s" % (len(bad), len(students), bad[0][0], bad[0][1]))
    firsts = sorted(s.times["first_cell"] for s in students)
    summary = {
        "students": len(students),
        "first_cell_all_s": round(firsts[-1], 1),
        "first_cell_median_s": round(firsts[len(firsts) // 2], 1),
        "server_ready_max_s": round(max(s.times["server"] for s in students), 1),
        "all_cells_max_s": round(max(s.times["all_cells"] for s in students), 1),
        "per_student": {s.name: {k: round(v, 2) for k, v in s.times.items()} for s in students},
    }
    log("class: every first cell ran within %.1fs (median %.1fs); all of 00 within %.1fs" % (
        summary["first_cell_all_s"], summary["first_cell_median_s"], summary["all_cells_max_s"]))

    # Isolation through the APIs: student i against student i+1.
    checks = 0
    teacher = Student(a.url, a.teacher, a.teacher_password)
    await teacher.login()
    for i, st in enumerate(students):
        v = students[(i + 1) % len(students)]
        if v is st:
            break
        checks += await expect_denied("%s reads %s's hub model" % (st.name, v.name),
                                      "%s/users/%s" % (st.hub, v.name), token=st.token)
        checks += await expect_denied("%s starts %s's server" % (st.name, v.name),
                                      "%s/users/%s/server" % (st.hub, v.name), "POST", token=st.token)
        checks += await expect_denied("%s makes a token for %s" % (st.name, v.name),
                                      "%s/users/%s/tokens" % (st.hub, v.name), "POST", token=st.token, body={})
        checks += await expect_denied("%s lists the users" % st.name, st.hub + "/users", token=st.token)
        checks += await expect_denied("%s reads %s's files" % (st.name, v.name),
                                      "%s/api/contents/work/marker.txt" % v.server, token=st.token)
        checks += await expect_denied("%s lists %s's kernels" % (st.name, v.name),
                                      "%s/api/kernels" % v.server, token=st.token)
        checks += await expect_denied("%s starts a kernel on %s's server" % (st.name, v.name),
                                      "%s/api/kernels" % v.server, "POST", token=st.token, body={"name": "attnbook"})
        checks += await expect_denied("%s opens a terminal on %s's server" % (st.name, v.name),
                                      "%s/api/terminals" % v.server, "POST", token=st.token)
        checks += await ws_denied("%s connects to %s's kernel" % (st.name, v.name), st, v)
        checks += await expect_denied("%s logs in as %s with their own password" % (st.name, v.name),
                                      "%s/users/%s/tokens" % (st.hub, v.name), "POST",
                                      body={"auth": {"username": v.name, "password": st.password}})
        checks += await expect_denied("no token reads %s's files" % v.name,
                                      "%s/api/contents/work/marker.txt" % v.server)
    # The teacher is the admin: sees every student.
    _, users = await call(a.url + "/hub/api/users?limit=1000", token=teacher.token)
    users = users["items"] if isinstance(users, dict) else users
    listed = {u["name"] for u in users}
    missing = set(names) - listed
    if missing:
        raise Fail("the teacher's /hub/api/users lacks %s" % sorted(missing))
    admins = sorted(u["name"] for u in users if u.get("admin"))
    if admins != [a.teacher]:
        raise Fail("admins are %s, want only the teacher %s" % (admins, a.teacher))
    # From inside kernels (two pairs: enough to show it, cheap on a busy machine).
    kprobes = 0
    if len(students) >= 2:
        pairs = [(students[0], students[1]), (students[-1], students[0])]
        for st, v in pairs:
            kprobes += await kernel_probe(st, v, a.home_root)
    log("isolation: %d API checks refused, %d probes from kernels denied, homes 0700; teacher is the only admin"
        % (checks, kprobes))
    summary.update(isolation_api_checks=checks, isolation_kernel_probes=kprobes)

    # Code completion on demand: no kernel runs the real gopls until its student asks for a
    # completion; then it answers (a GoMLX-sized module loads in a few seconds).
    st = students[0]
    before = await gopls_running(st)
    if before != 0:
        raise Fail("completion: %s's kernel runs %d real gopls before any completion request, want 0" % (st.name, before))
    t = time.monotonic()
    matches = []
    while "Println" not in matches:
        matches = await st.kernel.complete('import "fmt"\n\n%%\nfmt.Prin')
        if "Println" in matches:
            break
        if time.monotonic() - t > 180:
            raise Fail("completion: no 'Println' among the completions of fmt.Prin within 180s: %s" % matches[:10])
        await asyncio.sleep(3)
    after = await gopls_running(st)
    if after != 1:
        raise Fail("completion: %s's kernel runs %d real gopls after a completion, want 1" % (st.name, after))
    summary["completion_first_s"] = round(time.monotonic() - t, 1)
    log("completion: no gopls before the first request; 'fmt.Prin' completed to %s after %.1fs"
        % ([m for m in matches if m.startswith("Print")], summary["completion_first_s"]))

    # The teacher opens a student's notebooks and sees their kernels (the admin page's "access").
    for v in (students[0], students[-1]):
        _, nb = await call("%s/api/contents/%s?content=1" % (v.server, NOTEBOOK), token=teacher.token)
        if not nb["content"]["cells"]:
            raise Fail("teacher access: %s's notebook came back empty" % v.name)
        _, f = await call("%s/api/contents/work/marker.txt?content=1&type=file&format=text" % v.server,
                          token=teacher.token)
        if f["content"] != v.marker:
            raise Fail("teacher access: %s's marker.txt reads %r, want %r" % (v.name, f["content"], v.marker))
        _, ks = await call("%s/api/sessions" % v.server, token=teacher.token)
        if not ks:
            raise Fail("teacher access: no sessions listed on %s's server" % v.name)
    # What the admin page shows, through its API: the student's running server and its URL.
    _, u = await call("%s/users/%s" % (teacher.hub, students[0].name), token=teacher.token)
    if not (u.get("servers") or {}).get("", {}).get("url"):
        raise Fail("teacher access: the hub shows the teacher no server URL for %s: %s" % (students[0].name, u))
    log("teacher: opened 2 students' notebooks, files and sessions; sees %s's server at %s"
        % (students[0].name, u["servers"][""]["url"]))
    summary["teacher_access_checks"] = 7

    # Solutions are held: no student has them.
    for v in students:
        _, d = await call("%s/api/contents/notebooks?content=1" % v.server, token=v.token)
        names_ = sorted(x["name"] for x in d["content"])
        if any(n.endswith("_solutions.ipynb") for n in names_):
            raise Fail("solutions held, but %s has %s" % (v.name, names_))
        if "00_start_here.ipynb" not in names_ or "10_train_a_gpt.ipynb" not in names_:
            raise Fail("%s's notebooks/ lacks course notebooks: %s" % (v.name, names_))
    # One student edits notebook 01 (for the update check that follows in test.sh).
    path = "notebooks/01_simplified_attention.ipynb"
    _, m = await call("%s/api/contents/%s?content=1" % (st.server, path), token=st.token)
    nb = m["content"]
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": "my notes: EDITED-BY-STUDENT"})
    await call("%s/api/contents/%s" % (st.server, path), "PUT", token=st.token,
               body={"type": "notebook", "format": "json", "content": nb})
    log("solutions: held from all %d students; %s edited %s" % (len(students), st.name, path))

    state = {"url": a.url, "teacher": [teacher.name, teacher.password, teacher.token],
             "students": [[s.name, s.password, s.token, s.marker] for s in students]}
    with open(os.path.join(a.state, "class-state.json"), "w") as f:
        json.dump(state, f)
    return summary


def load_state(a):
    with open(os.path.join(a.state, "class-state.json")) as f:
        state = json.load(f)
    students = []
    for name, pw, token, marker in state["students"]:
        s = Student(a.url, name, pw)
        s.token, s.marker = token, marker
        students.append(s)
    tname, tpw, ttoken = state["teacher"]
    teacher = Student(a.url, tname, tpw)
    teacher.token = ttoken
    return students, teacher


async def phase_course(a):
    """After `classroom.sh update` (00 and 01 changed, 99_update_check new) and `solutions give`:
    every student has the new notebook and the solutions; unedited notebooks are the course's new
    version; the one student who edited 01 keeps their edit, with the new version beside it."""
    students, _ = load_state(a)
    marker = a.marker

    async def text_of(st, path):
        _, m = await call("%s/api/contents/%s?content=1&format=text&type=file" % (st.server, quote(path)),
                          token=st.token)
        return m["content"]

    checks = 0
    for i, st in enumerate(students):
        _, d = await call("%s/api/contents/notebooks?content=1" % st.server, token=st.token)
        have = {x["name"] for x in d["content"]}
        want = {"99_update_check.ipynb", "08_exercises_solutions.ipynb", "00_start_here.ipynb"}
        if not want <= have:
            raise Fail("update: %s lacks %s" % (st.name, sorted(want - have)))
        if marker not in await text_of(st, "notebooks/00_start_here.ipynb"):
            raise Fail("update: %s's unedited 00_start_here.ipynb is not the course's new version" % st.name)
        one = await text_of(st, "notebooks/01_simplified_attention.ipynb")
        beside = "01_simplified_attention (course update).ipynb"
        if i == 0:
            if "EDITED-BY-STUDENT" not in one or marker in one:
                raise Fail("update: %s's edited 01 was not kept as it was" % st.name)
            if beside not in have or marker not in await text_of(st, "notebooks/" + beside):
                raise Fail("update: %s has no %r with the course's new version: %s" % (st.name, beside, sorted(have)))
        else:
            if marker not in one or beside in have:
                raise Fail("update: %s's unedited 01 is not the new version (or a copy was put beside it)" % st.name)
        checks += 5
    log("update: %d students: new notebook and solutions arrived, unedited notebooks updated, "
        "the edited one kept with the course's version beside it (%d checks)" % (len(students), checks))
    return {"update_checks": checks}


async def phase_notebook(a):
    """The first --limit students (all by default) close their kernels and run every code cell of
    --path together, with the kernel environment --env KEY=VALUE (e.g. ATTNBOOK_SHORT=1)."""
    students, _ = load_state(a)
    if a.limit:
        students = students[:a.limit]
    t0 = time.monotonic()

    async def one(st):
        _, sessions = await call(st.server + "/api/sessions", token=st.token)
        for sess in sessions or []:
            await call("%s/api/sessions/%s" % (st.server, sess["id"]), "DELETE", token=st.token)
        nb = await st.open_notebook(a.path)
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in nb["cells"] if c["cell_type"] == "code"]
        await st.start_kernel(a.path)
        for kv in a.env:
            k, v = kv.split("=", 1)
            await st.kernel.run("%%env %s %s" % (k, v))
        last = ""
        for i, code in enumerate(cells):
            try:
                last, _ = await st.kernel.run(code, timeout=3600)
            except Fail as e:
                raise Fail("%s: %s cell %d: %s" % (st.name, a.path, i + 1, e))
        st.times["notebook"] = time.monotonic() - t0
        log("%s: %s: %d cells in %.1fs; last: %s" % (st.name, a.path, len(cells), st.times["notebook"],
                                                      last.strip().splitlines()[-1][:120] if last.strip() else ""))
        await call("%s/api/sessions" % st.server, token=st.token)

    res = await asyncio.gather(*(one(s) for s in students), return_exceptions=True)
    bad = [(s.name, r) for s, r in zip(students, res) if isinstance(r, Exception)]
    if bad:
        raise Fail("%s: %d/%d students failed; first: %s: %s" % (a.path, len(bad), len(students), bad[0][0], bad[0][1]))
    times = sorted(s.times["notebook"] for s in students)
    summary = {"notebook": a.path, "notebook_students": len(students), "notebook_all_s": round(times[-1], 1),
               "notebook_median_s": round(times[len(times) // 2], 1), "notebook_first_s": round(times[0], 1)}
    log("%s: %d students together: all done in %.1fs (median %.1fs, first %.1fs)" % (
        a.path, len(students), times[-1], times[len(times) // 2], times[0]))
    return summary


def container_cpu():
    """CPU-seconds the container used so far, less this process's own (profile runs inside the
    hub container, through docker exec)."""
    for path in ("/sys/fs/cgroup/cpu.stat",):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("usage_usec "):
                        total = int(line.split()[1]) / 1e6
                        break
                else:
                    continue
            break
        except OSError:
            continue
    else:
        total = None
        for path in ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"):
            try:
                with open(path) as f:
                    total = int(f.read()) / 1e9
                break
            except OSError:
                continue
    own = sum(os.times()[:2])
    return total - own


async def phase_profile(a):
    """One student at a time, each step on its own: the container's CPU-seconds for login, server
    start, kernel start, each cell of 00, and the first completion (gopls starting). Run inside the
    hub container with no other student active: `docker exec HUB python3 client.py profile ...`."""
    names = a.students.split(",")
    out = []
    for name in names:
        st = Student(a.url, name, "pw-%s-%s" % (name, secrets.token_hex(6)))
        steps = {}

        async def step(what, coro):
            await asyncio.sleep(1.5)  # let the previous step's stragglers finish
            c0, t0 = container_cpu(), time.monotonic()
            r = await coro
            await asyncio.sleep(1.0)
            steps[what] = {"cpu_s": round(container_cpu() - c0 - 1.0 * 0, 2), "wall_s": round(time.monotonic() - t0, 2)}
            return r

        await step("login", st.login())
        await step("server", st.start_server())
        nb = await st.open_notebook()
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in nb["cells"] if c["cell_type"] == "code"]
        await step("kernel", st.start_kernel())
        for i, code in enumerate(cells):
            await step("cell%d" % (i + 1), st.kernel.run(code))

        async def complete():
            t = time.monotonic()
            while time.monotonic() - t < 180:
                m = await st.kernel.complete('import "fmt"\n\n%%\nfmt.Prin')
                if "Println" in m:
                    return m
                await asyncio.sleep(2)
            raise Fail("no completion within 180s")
        await step("first_completion", complete())
        await step("second_completion", st.kernel.complete('import "fmt"\n\n%%\nfmt.Sprin'))
        log("%s: %s" % (name, json.dumps(steps)))
        out.append({"student": name, "steps": steps})
    return {"profile": out}


async def phase_restart(a):
    with open(os.path.join(a.state, "class-state.json")) as f:
        state = json.load(f)
    students = []
    for name, pw, token, marker in state["students"]:
        s = Student(a.url, name, pw)
        s.token, s.marker = token, marker
        students.append(s)
    t = time.monotonic()

    async def back(st):
        # The token from before the restart still works (the hub's database is on its volume).
        _, me = await call(st.hub + "/user", token=st.token)
        if me["name"] != st.name:
            raise Fail("token of %s identifies %s" % (st.name, me["name"]))
        if me.get("servers"):
            raise Fail("%s has a server listed right after the restart: %s" % (st.name, me["servers"]))
        # The password set at first login still holds; a wrong one does not.
        await expect_denied("%s with a wrong password" % st.name, "%s/users/%s/tokens" % (st.hub, st.name),
                            "POST", body={"auth": {"username": st.name, "password": st.password + "x"}})
        await st.login()
        await st.start_server()
        code, f = await call("%s/api/contents/work/marker.txt?content=1&type=file&format=text" % st.server,
                             token=st.token)
        if f["content"] != st.marker:
            raise Fail("%s's marker.txt after the restart is %r, want %r" % (st.name, f["content"], st.marker))
        nb = await st.open_notebook()
        if not nb["cells"]:
            raise Fail("%s's notebook is empty after the restart" % st.name)

    res = await asyncio.gather(*(back(s) for s in students), return_exceptions=True)
    bad = [(s.name, r) for s, r in zip(students, res) if isinstance(r, Exception)]
    if bad:
        raise Fail("after the restart %d/%d students failed; first: %s: %s" % (len(bad), len(students), bad[0][0], bad[0][1]))
    summary = {"restart_students_ok": len(students), "restart_servers_s": round(time.monotonic() - t, 1)}
    log("restart: %d students: old tokens valid, passwords kept, files kept, servers back in %.1fs"
        % (len(students), summary["restart_servers_s"]))

    if a.cull_within:
        tname, tpw, ttoken = state["teacher"]
        t = time.monotonic()
        while True:
            _, users = await call(a.url + "/hub/api/users?state=active&limit=1000", token=ttoken)
            users = users["items"] if isinstance(users, dict) else users
            active = [u["name"] for u in users if u.get("servers")]
            if not active:
                break
            if time.monotonic() - t > a.cull_within:
                raise Fail("idle culler: servers of %s still running after %ds" % (active, a.cull_within))
            await asyncio.sleep(2)
        summary["culled_after_s"] = round(time.monotonic() - t, 1)
        log("idle culler: every idle server stopped %.1fs after the last request" % summary["culled_after_s"])
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", choices=["class", "course", "notebook", "restart", "profile"])
    ap.add_argument("--url", required=True)
    ap.add_argument("--state", required=True, help="a directory to keep tokens and passwords between phases")
    ap.add_argument("--students", default="")
    ap.add_argument("--teacher", default="teacher")
    ap.add_argument("--teacher-password", default="")
    ap.add_argument("--home-root", default="/home/class")
    ap.add_argument("--cull-within", type=int, default=0)
    ap.add_argument("--ca", default=None, help="CA file for an https --url")
    ap.add_argument("--marker", default="UPDATED-BY-THE-TEACHER", help="course: text the updated notebooks carry")
    ap.add_argument("--path", default="notebooks/10_train_a_gpt.ipynb", help="notebook: which notebook")
    ap.add_argument("--env", action="append", default=[], help="notebook: KEY=VALUE for the kernel (%%env)")
    ap.add_argument("--limit", type=int, default=0, help="notebook: only the first N students")
    a = ap.parse_args()
    a.url = a.url.rstrip("/")
    global CA, STATE_DIR
    CA, STATE_DIR = a.ca, a.state
    phases = {"class": phase_class, "course": phase_course, "notebook": phase_notebook, "restart": phase_restart,
              "profile": phase_profile}
    try:
        summary = asyncio.run(phases[a.phase](a))
    except Fail as e:
        print("client: FAIL %s" % e, flush=True)
        sys.exit(1)
    print("client: ok " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
