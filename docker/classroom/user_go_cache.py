#!/usr/bin/env python3
"""user_go_cache.py NAME — give a student a warm Go build cache of their own (run as root by the
hub before each spawn). user_go_cache.py --seed: refresh the seed's mtimes (classroom-start.sh, at
every container start, so the copy-up of the image's files happens before the first spawn).

The image's build cache (the seed, $CLASSROOM_SEED_GOCACHE, jovyan's ~/.cache/go-build) holds
GoMLX, GoNB and attnbook compiled for the notebooks; without it a student's first cell compiles
for minutes. Each student gets /var/cache/attnbook/go-build/NAME: directories owned by the
student (mode 0700 at the top), files hard links to the seed's files. A hard link costs no space,
the seed's files stay owned by jovyan and read-only to students (nobody can poison another's
cache), and Go only ever adds new files (content-addressed) to a cache directory.

Go deletes cache files unused for 5 days (it tries to refresh a file's mtime on use; a student
cannot on jovyan's files), so the seed's mtimes are refreshed here at most twice a day, and links
a trim removed come back at the next spawn.
"""
import os
import pwd
import sys
import time

ROOT = "/var/cache/attnbook/go-build"
SEED = os.environ.get("CLASSROOM_SEED_GOCACHE", "/home/jovyan/.cache/go-build")


def refresh_seed():
    """Sets the seed files' mtimes to now, at most every 12 hours. The first time in a container
    this also copies the image's files up into the container's layer (what any link would do)."""
    stamp = os.path.join(ROOT, ".seed-touched")
    now = time.time()
    touched = 0
    if not os.path.exists(stamp) or now - os.path.getmtime(stamp) > 12 * 3600:
        for d, _, files in os.walk(SEED):
            for f in files:
                os.utime(os.path.join(d, f), (now, now))
                touched += 1
        with open(stamp, "w"):
            pass
    return touched


def main():
    os.makedirs(ROOT, exist_ok=True)
    os.chmod(ROOT, 0o711)  # students may enter their own directory, not list the others
    if not os.path.isdir(SEED):
        print("no seed cache at %s: cold cache" % SEED)
        return
    if sys.argv[1:] == ["--seed"]:
        t = time.monotonic()
        print("seed %s: %d mtimes refreshed in %.1fs" % (SEED, refresh_seed(), time.monotonic() - t))
        return
    name = sys.argv[1]
    pw = pwd.getpwnam(name)
    touched = refresh_seed()

    dst = os.path.join(ROOT, name)
    made = not os.path.isdir(dst)
    os.makedirs(dst, mode=0o700, exist_ok=True)
    linked = 0
    for d, _, files in os.walk(SEED):
        rel = os.path.relpath(d, SEED)
        if rel == ".":
            # README, trim.txt, testexpire.txt: the student's Go writes its own.
            continue
        out = os.path.join(dst, rel)
        if not os.path.isdir(out):
            os.mkdir(out, 0o755)
            os.chown(out, pw.pw_uid, pw.pw_gid)
        for f in files:
            target = os.path.join(out, f)
            if not os.path.lexists(target):
                os.link(os.path.join(d, f), target)
                linked += 1
    os.chown(dst, pw.pw_uid, pw.pw_gid)
    os.chmod(dst, 0o700)
    print("%s %s: %d files linked from %s%s" % ("made" if made else "refreshed", dst, linked, SEED,
                                               ", seed mtimes refreshed (%d)" % touched if touched else ""))


if __name__ == "__main__":
    main()
