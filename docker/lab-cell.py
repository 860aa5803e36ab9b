#!/usr/bin/env python3
"""lab-cell.py — run one cell through a running Jupyter server's REST and WebSocket APIs, the way
JupyterLab does: a session for a notebook path (the kernel starts in that notebook's folder), an
execute_request on the kernel's channels, the outputs collected until the kernel is idle.
Used inside the container by docker_test.go (TestUpLab); needs only tornado (Jupyter's own).

  JUPYTER_TOKEN=... python3 lab-cell.py CODE NOTEBOOK_PATH [KERNEL]

Prints one JSON object: {"status": "ok"|"error", "stdout": ..., "stderr": ..., "error": ...}.
"""
import json, os, sys, time, urllib.request, uuid

from tornado import ioloop, websocket

base = "127.0.0.1:%s" % os.environ.get("JUPYTER_PORT", "8888")
token = os.environ["JUPYTER_TOKEN"]
code, path = sys.argv[1], sys.argv[2]
kernel = sys.argv[3] if len(sys.argv) > 3 else "attnbook"


def api(method, url, body=None):
    req = urllib.request.Request("http://%s%s" % (base, url), method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "token " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        data = r.read()
    return json.loads(data) if data else None


async def execute(kernel_id):
    ws = await websocket.websocket_connect("ws://%s/api/kernels/%s/channels?token=%s" % (base, kernel_id, token))
    session, msg_id = uuid.uuid4().hex, uuid.uuid4().hex
    ws.write_message(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request",
                   "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    out = {"status": None, "stdout": "", "stderr": "", "error": None}
    idle = False
    deadline = time.monotonic() + 600
    while not (idle and out["status"]) and time.monotonic() < deadline:
        raw = await ws.read_message()
        if raw is None:
            break
        msg = json.loads(raw)
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        t, c = msg["header"]["msg_type"], msg["content"]
        if t == "stream":
            out[c["name"]] += c["text"]
        elif t == "error":
            out["error"] = "%s: %s" % (c.get("ename"), c.get("evalue"))
        elif t == "execute_reply":
            out["status"] = c["status"]
        elif t == "status" and c["execution_state"] == "idle":
            idle = True
    ws.close()
    return out


s = api("POST", "/api/sessions", {"path": path, "type": "notebook", "name": os.path.basename(path),
                                  "kernel": {"name": kernel}})
try:
    result = ioloop.IOLoop.current().run_sync(lambda: execute(s["kernel"]["id"]))
finally:
    api("DELETE", "/api/sessions/" + s["id"])
print(json.dumps(result))
