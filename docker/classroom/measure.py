#!/usr/bin/env python3
"""measure.py — memory of a running class, read from /proc inside the hub container (as root).

  docker exec -i HUB python3 - < measure.py        # memory, disk, CPU time used so far
  docker exec -i HUB python3 - cpu < measure.py    # CPU time only

Per student (users with UID >= 2000): PSS and RSS of the single-user server
(jupyterhub-singleuser, started as singleuser.py) and of each kernel (gonb and everything it
started: go build, the cell's program, gopls). PSS splits shared pages among the processes that
map them, so PSS figures add up to what the class really uses; RSS counts shared libraries in
full for every process. Also the container's cgroup: memory in use now and its peak since the
container started, and the disk a student uses (home, and Go build-cache files of their own, not
links to the image's cache).
Prints one JSON object.
"""
import json
import os
import pwd
import statistics
import sys


def is_server(cmd):
    """Whether a command line is a student's Jupyter server (with a student's uid): a fork of
    serverfork.py, which keeps its command line; singleuser.py or jupyterhub-singleuser when
    started by exec."""
    return any(s in cmd for s in ("attnbook-classroom/serverfork.py", "attnbook-classroom/singleuser.py",
                                  "jupyterhub-singleuser"))


def _read_rollup(pid):
    out = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Rss", "Pss"):
                out[k] = int(v.split()[0]) * 1024
    return out


def rollup(pid, uid):
    """Rss and Pss of pid. Reading another user's smaps needs CAP_SYS_PTRACE, which a container's
    root lacks: a child process becomes that user to read it."""
    try:
        if os.getuid() != 0 or uid == 0:
            return _read_rollup(pid)
        r, w = os.pipe()
        child = os.fork()
        if child == 0:
            code = 1
            try:
                os.close(r)
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.write(w, json.dumps(_read_rollup(pid)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            data += chunk
        os.close(r)
        _, status = os.waitpid(child, 0)
        return json.loads(data) if status == 0 and data else None
    except OSError:
        return None


def procs():
    ps = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        pid = int(p)
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            uid = os.stat("/proc/%d" % pid).st_uid
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        mem = rollup(pid, uid)
        if mem is None:
            continue
        ps[pid] = {"ppid": ppid, "cmd": cmd, "uid": uid, **mem}
    return ps


def tree(ps, root):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(q for q, v in ps.items() if v["ppid"] == p)
    return out


def cgroup(name):
    for path in ("/sys/fs/cgroup/" + name, "/sys/fs/cgroup/memory/" + name.replace("memory.current", "memory.usage_in_bytes").replace("memory.peak", "memory.max_usage_in_bytes")):
        try:
            with open(path) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError):
            continue
    return None


def cpu_seconds():
    """CPU time the container has used, in seconds (cgroup v2 cpu.stat, or v1 cpuacct)."""
    try:
        with open("/sys/fs/cgroup/cpu.stat") as f:
            for line in f:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except OSError:
        pass
    for path in ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"):
        try:
            with open(path) as f:
                return int(f.read()) / 1e9
        except (OSError, ValueError):
            continue
    return None


def du(path, own_only=False):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(d, f))
            except OSError:
                continue
            if own_only and st.st_nlink > 1:
                continue
            total += st.st_blocks * 512
    return total


def main():
    if sys.argv[1:] == ["cpu"]:
        print(json.dumps({"cpu_s": cpu_seconds()}))
        return
    ps = procs()
    servers, kernels = [], []
    for pid, p in ps.items():
        if p["uid"] < 2000:
            continue
        if is_server(p["cmd"]) and ps.get(p["ppid"], {}).get("uid") != p["uid"]:
            servers.append(pid)
        elif "gonb" in p["cmd"].split(" ")[0] and ps.get(p["ppid"], {}).get("uid") == p["uid"] \
                and is_server(ps.get(p["ppid"], {}).get("cmd", "")):
            kernels.append(pid)
    srv = [ps[p] for p in servers]
    ker = []
    for k in kernels:
        t = tree(ps, k)
        ker.append({"Pss": sum(ps[q]["Pss"] for q in t), "Rss": sum(ps[q]["Rss"] for q in t), "procs": len(t)})
    hub = [p for p in ps.values() if p["uid"] == 0]
    homes = "/home/class"
    users = sorted({pwd.getpwuid(ps[p]["uid"]).pw_name for p in servers})
    mib = lambda b: round(b / 2**20, 1)
    res = {
        "servers": len(srv), "kernels": len(ker),
        # Servers that are forks of the hub's serverfork.py (root), not started by exec.
        "servers_forked": sum(1 for p in srv if "serverfork.py" in ps.get(p["ppid"], {}).get("cmd", "")
                              and ps[p["ppid"]]["uid"] == 0),
        "server_pss_mib_mean": mib(statistics.mean(p["Pss"] for p in srv)) if srv else None,
        "server_rss_mib_mean": mib(statistics.mean(p["Rss"] for p in srv)) if srv else None,
        "kernel_pss_mib_mean": mib(statistics.mean(k["Pss"] for k in ker)) if ker else None,
        "kernel_rss_mib_mean": mib(statistics.mean(k["Rss"] for k in ker)) if ker else None,
        "kernel_procs_mean": round(statistics.mean(k["procs"] for k in ker), 1) if ker else None,
        "hub_and_proxy_pss_mib": mib(sum(p["Pss"] for p in hub)),
        "all_pss_mib": mib(sum(p["Pss"] for p in ps.values())),
        "cgroup_current_mib": mib(cgroup("memory.current") or 0),
        "cgroup_peak_mib": mib(cgroup("memory.peak") or 0),
        "cpu_s": cpu_seconds(),
        "home_disk_mib_mean": mib(statistics.mean(du(os.path.join(homes, u)) for u in users)) if users else None,
        "gocache_own_disk_mib_mean": mib(statistics.mean(
            du("/var/cache/attnbook/go-build/" + u, own_only=True) for u in users)) if users else None,
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
