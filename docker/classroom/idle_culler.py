#!/usr/bin/env python3
"""idle_culler.py — stop students' servers that have been idle too long.

A JupyterHub-managed service (see jupyterhub_config.py) doing what jupyterhub-idle-culler does,
which Debian does not package: every --every seconds it lists the users with a ready server
through the hub's REST API and stops each server whose last activity is older than --timeout
seconds. It holds only the scopes it needs (list:users, read:users:activity, read:servers,
delete:servers). Students' files stay; their next login starts a fresh server.

Standard library only. The hub passes JUPYTERHUB_API_URL and JUPYTERHUB_API_TOKEN.
"""
import argparse
import datetime as dt
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

API = os.environ.get("JUPYTERHUB_API_URL", "http://127.0.0.1:8081/hub/api").rstrip("/")
TOKEN = os.environ.get("JUPYTERHUB_API_TOKEN", "")


def api(method, path):
    req = urllib.request.Request(API + path, method=method,
                                 headers={"Authorization": "token " + TOKEN,
                                          "Accept": "application/jupyterhub-pagination+json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
        return r.status, (json.loads(body) if body else None)


def parse_time(s):
    # JupyterHub writes ISO 8601 in UTC: 2026-11-21T10:53:01.123456Z
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def ready_users():
    offset = 0
    while True:
        _, page = api("GET", "/users?state=ready&limit=200&offset=%d" % offset)
        items = page["items"] if isinstance(page, dict) else page
        yield from items
        nxt = page.get("_pagination", {}).get("next") if isinstance(page, dict) else None
        if not nxt:
            return
        offset = nxt["offset"]


def cull_once(timeout):
    now = dt.datetime.now(dt.timezone.utc)
    for user in ready_users():
        for sname, server in (user.get("servers") or {}).items():
            if not server.get("ready") or server.get("pending"):
                continue
            last = server.get("last_activity") or server.get("started")
            if not last:
                continue
            idle = (now - parse_time(last)).total_seconds()
            if idle < timeout:
                continue
            path = "/users/%s/server" % urllib.parse.quote(user["name"])
            if sname:
                path = "/users/%s/servers/%s" % (urllib.parse.quote(user["name"]), urllib.parse.quote(sname))
            try:
                status, _ = api("DELETE", path)
                print("idle-culler: stopped %s's server (idle %.0fs, timeout %ds): HTTP %d"
                      % (user["name"], idle, timeout, status), flush=True)
            except urllib.error.HTTPError as e:
                print("idle-culler: stopping %s failed: HTTP %d %s" % (user["name"], e.code, e.read()[:200]),
                      file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=int, default=3600, help="idle seconds before a server is stopped")
    ap.add_argument("--every", type=int, default=60, help="seconds between checks")
    args = ap.parse_args()
    print("idle-culler: stopping servers idle for %ds, checking every %ds" % (args.timeout, args.every), flush=True)
    while True:
        try:
            cull_once(args.timeout)
        except Exception as e:  # the hub restarting, a network hiccup: try again next round
            print("idle-culler: %s: %s" % (type(e).__name__, e), file=sys.stderr, flush=True)
        time.sleep(args.every)


if __name__ == "__main__":
    main()
