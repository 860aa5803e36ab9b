#!/usr/bin/env python3
"""course.py — the course's notebooks in every student's home (runs as root in the hub container).

  course.py seed SRC         first start only: the course is SRC/*.ipynb (the image's notebooks)
  course.py stage SRC        a new version of the course: SRC/*.ipynb replaces it (classroom.sh update)
  course.py deliver [NAME..] bring the course to the students' homes (default: everyone, teacher too)
  course.py solutions give|hold|status

The course lives in the hub volume ($CLASSROOM_STATE/course, root only). Delivery follows one rule
for every notebook of the course, per student:

  - not in the student's notebooks/ folder: copied there (new notebooks, and ones a student
    deleted, arrive);
  - the student's copy is what they were last given (unedited): replaced by the course's version;
  - the student edited it (it differs from what they were given) and the course changed: their
    file is kept as it is, and the course's version is put beside it as
    "NAME (course update).ipynb" (replaced at the next update unless the student edited that one
    too; then "NAME (course update 2).ipynb", ...).

Nothing a student wrote is ever overwritten. What each student was given (SHA-256 per file) is
kept in $CLASSROOM_STATE/delivered/NAME.json. Exercise solutions (*_solutions.ipynb) are
delivered only once the teacher gives them: CLASSROOM_SOLUTIONS=give, or `solutions give` (kept
in the hub volume); the teacher always gets them.

A student's home is theirs: every file in it is read and written by a child process running as
that student (a symlink planted in a home cannot make root write elsewhere).
"""
import hashlib
import json
import os
import pwd
import shutil
import sys

STATE = os.environ.get("CLASSROOM_STATE", "/srv/jupyterhub")
COURSE = os.path.join(STATE, "course")
DELIVERED = os.path.join(STATE, "delivered")
SOLUTIONS_STATE = os.path.join(STATE, "solutions")
CLASS_USERS = os.path.join(STATE, "class-users.txt")
TEACHER = os.environ.get("CLASSROOM_TEACHER", "teacher")
SUFFIX = "_solutions.ipynb"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def is_solution(name):
    return name.endswith(SUFFIX)


def solutions_given():
    if os.environ.get("CLASSROOM_SOLUTIONS", "hold") == "give":
        return True
    try:
        with open(SOLUTIONS_STATE) as f:
            return f.read().strip() == "give"
    except FileNotFoundError:
        return False


def read_notebooks(src):
    """{name: bytes} of src/*.ipynb, each checked to be a notebook (JSON with cells)."""
    out = {}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".ipynb") or name.startswith("."):
            continue
        with open(os.path.join(src, name), "rb") as f:
            data = f.read()
        try:
            nb = json.loads(data)
            if not isinstance(nb.get("cells"), list):
                raise ValueError("no cells list")
        except ValueError as e:
            sys.exit("course: %s is not a notebook: %s" % (os.path.join(src, name), e))
        out[name] = data
    if not out:
        sys.exit("course: no notebooks (*.ipynb) in %s" % src)
    return out


def stage(src, only_if_missing=False):
    if only_if_missing and os.path.isdir(COURSE):
        return "course kept (%d notebooks)" % len([n for n in os.listdir(COURSE) if n.endswith(".ipynb")])
    nbs = read_notebooks(src)
    tmp = COURSE + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, mode=0o700)
    for name, data in nbs.items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    old = COURSE + ".old"
    shutil.rmtree(old, ignore_errors=True)
    if os.path.isdir(COURSE):
        os.rename(COURSE, old)
    os.rename(tmp, COURSE)
    shutil.rmtree(old, ignore_errors=True)
    return "course: %d notebooks from %s" % (len(nbs), src)


def deliver_as_student(home, course, given):
    """Runs as the student: applies the rule to home/notebooks. Returns (given', counts)."""
    nbdir = os.path.join(home, "notebooks")
    os.makedirs(nbdir, exist_ok=True)
    counts = {"new": 0, "updated": 0, "beside": 0, "same": 0, "kept": 0}
    given = dict(given)

    def read(path):
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def write(path, data):
        tmp = os.path.join(nbdir, ".course-%d.tmp" % os.getpid())
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    for name, data in sorted(course.items()):
        new = sha(data)
        path = os.path.join(nbdir, name)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            counts["kept"] += 1  # not a plain file: the student's business
            continue
        have = read(path)
        last = given.get(name)
        if have is None:
            write(path, data)
            counts["new"] += 1
        elif sha(have) == new:
            counts["same"] += 1
        elif last is not None and sha(have) == last:
            write(path, data)
            counts["updated"] += 1
        elif last == new:
            counts["kept"] += 1  # edited, and the course has not changed since
            continue
        else:
            stem = name[: -len(".ipynb")]
            for i in range(1, 100):
                bname = "%s (course update%s).ipynb" % (stem, "" if i == 1 else " %d" % i)
                bpath = os.path.join(nbdir, bname)
                if os.path.islink(bpath):
                    continue
                bhave = read(bpath)
                if bhave is None or sha(bhave) in (new, given.get("beside:" + bname)):
                    if bhave is None or sha(bhave) != new:
                        write(bpath, data)
                    given["beside:" + bname] = new
                    break
            counts["beside"] += 1
        given[name] = new
    return given, counts


def deliver_one(name, course):
    pw = pwd.getpwnam(name)
    if not os.path.isdir(pw.pw_dir):
        return None
    os.makedirs(DELIVERED, mode=0o700, exist_ok=True)
    record = os.path.join(DELIVERED, name + ".json")
    try:
        with open(record) as f:
            given = json.load(f)
    except (FileNotFoundError, ValueError):
        given = {}
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            os.umask(0o022)
            out = deliver_as_student(pw.pw_dir, course, given)
            os.write(w, json.dumps(out).encode())
            code = 0
        except BaseException as e:  # report, never raise in the child
            os.write(w, json.dumps({"error": "%s: %s" % (type(e).__name__, e)}).encode())
        finally:
            os._exit(code)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    res = json.loads(data) if data else {"error": "no answer"}
    if status != 0 or isinstance(res, dict):
        raise RuntimeError("delivering to %s failed: %s" % (name, res.get("error") if isinstance(res, dict) else status))
    given, counts = res
    tmp = record + ".tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(given, f, indent=1, sort_keys=True)
    os.replace(tmp, record)
    return counts


def deliver(names):
    if not os.path.isdir(COURSE):
        sys.exit("course: no course in %s yet (seed or stage it first)" % COURSE)
    course = {}
    for n in sorted(os.listdir(COURSE)):
        if n.endswith(".ipynb"):
            with open(os.path.join(COURSE, n), "rb") as f:
                course[n] = f.read()
    if not names:
        with open(CLASS_USERS) as f:
            names = [line.strip() for line in f if line.strip()] + [TEACHER]
    give = solutions_given()
    total = {"students": 0, "new": 0, "updated": 0, "beside": 0, "same": 0, "kept": 0}
    failed = []
    for name in names:
        mine = {k: v for k, v in course.items() if give or name == TEACHER or not is_solution(k)}
        try:
            counts = deliver_one(name, mine)
        except (KeyError, RuntimeError, OSError) as e:
            failed.append("%s (%s)" % (name, e))
            continue
        if counts is None:
            continue
        total["students"] += 1
        for k, v in counts.items():
            total[k] += v
    held = "" if give else ", solutions held"
    print("course: %d notebooks to %d homes: %d new, %d updated, %d kept with the course's version beside, "
          "%d unchanged, %d edited and kept%s" % (len(course), total["students"], total["new"], total["updated"],
                                                  total["beside"], total["same"], total["kept"], held))
    if failed:
        sys.exit("course: delivery failed for %s" % "; ".join(failed))


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == "seed" and len(a) == 2:
        print(stage(a[1], only_if_missing=True))
    elif a[0] == "stage" and len(a) == 2:
        print(stage(a[1]))
    elif a[0] == "deliver":
        deliver(a[1:])
    elif a[0] == "solutions" and len(a) == 2 and a[1] in ("give", "hold", "status"):
        if a[1] != "status":
            with open(SOLUTIONS_STATE, "w") as f:
                f.write(a[1] + "\n")
        env = os.environ.get("CLASSROOM_SOLUTIONS", "hold")
        print("course: solutions %s%s" % ("given" if solutions_given() else "held",
                                         " (CLASSROOM_SOLUTIONS=give overrides)" if env == "give" else ""))
        if a[1] == "give":
            deliver([])
        elif a[1] == "hold":
            print("course: students who already have them keep them")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
