#!/usr/bin/env python3
"""user_go_cache.py NAME — give a student a warm Go build cache of their own (run as root by the
hub before each spawn). user_go_cache.py --seed (classroom-start.sh, at every container start):
bring the seed up to date with the image's cache and empty the students' caches.

The image's build cache ($CLASSROOM_SEED_GOCACHE, jovyan's ~/.cache/go-build) holds GoMLX, GoNB
and attnbook compiled for the notebooks; without it a student's first cell compiles for minutes.
Its copy, the seed, lives in ROOT/.seed, on the cache volume that classroom.sh mounts at ROOT:
each student gets ROOT/NAME, directories owned by the student (mode 0700 at the top), files hard
links to the seed's files. A hard link costs no space, the seed's files stay owned by jovyan and
read-only to students (nobody can poison another's cache), and Go only ever adds new files
(content-addressed) to a cache directory. The seed is a copy, not the image's files themselves,
because links must stay on one filesystem: on the volume a student's 4,500 links are plain
syscalls, where in the container's own layer (Docker's fuse-overlayfs here) each was a trip
through a FUSE daemon — 3.5-4.5 s and 1.1-1.3 CPU-s per student in the container, more in the
daemon, on the same cores as the class.

Go deletes cache files unused for 5 days (it tries to refresh a file's mtime on use; a student
cannot on jovyan's files), so the seed's mtimes are refreshed here at most twice a day, and links
a trim removed come back at the next spawn.
"""
import os
import pwd
import shutil
import sys
import time

ROOT = "/var/cache/attnbook/go-build"
IMAGE_SEED = os.environ.get("CLASSROOM_SEED_GOCACHE", "/home/jovyan/.cache/go-build")
SEED = os.path.join(ROOT, ".seed")  # a leading dot: no user name can be it


def sync_seed():
    """Makes SEED hold the files of IMAGE_SEED's subdirectories, owned as there: copies the files
    it lacks, removes those the image no longer has. A cache file's name is the hash of its
    content (outputs) or of the build action (entries), so a name on both sides is the same file.
    Returns (copied, removed, bytes copied)."""
    copied = removed = size = 0
    st = os.stat(IMAGE_SEED)
    os.makedirs(SEED, exist_ok=True)
    os.chown(SEED, st.st_uid, st.st_gid)
    os.chmod(SEED, 0o755)
    want = set()
    for d, _, files in os.walk(IMAGE_SEED):
        rel = os.path.relpath(d, IMAGE_SEED)
        if rel == ".":
            continue  # README, trim.txt, testexpire.txt: each student's Go writes its own
        out = os.path.join(SEED, rel)
        if not os.path.isdir(out):
            os.mkdir(out, 0o755)
            os.chown(out, st.st_uid, st.st_gid)
        for f in files:
            want.add(os.path.join(rel, f))
            target = os.path.join(out, f)
            if os.path.lexists(target):
                continue
            src = os.path.join(d, f)
            fst = os.stat(src)
            tmp = target + ".part"
            shutil.copyfile(src, tmp)
            os.chown(tmp, fst.st_uid, fst.st_gid)
            os.chmod(tmp, fst.st_mode & 0o644)  # nobody but root writes the seed
            os.replace(tmp, target)
            copied += 1
            size += fst.st_size
    for d, _, files in os.walk(SEED):
        rel = os.path.relpath(d, SEED)
        for f in files:
            if os.path.join(rel, f) not in want:
                os.remove(os.path.join(d, f))
                removed += 1
    return copied, removed, size


def empty_students_caches():
    """Removes every cache but the seed: a container start begins with fresh caches, as a new
    container layer did before the caches moved to a volume (a UID that changed with the class
    list must not find another student's directories)."""
    gone = 0
    for entry in os.scandir(ROOT):
        if entry.path != SEED and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
            gone += 1
    return gone


def refresh_seed():
    """Sets the seed files' mtimes to now, at most every 12 hours."""
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
    os.chown(ROOT, 0, 0)
    os.chmod(ROOT, 0o711)  # students may enter their own directory, not list the others
    if not os.path.isdir(IMAGE_SEED):
        print("no seed cache at %s: cold cache" % IMAGE_SEED)
        return
    if sys.argv[1:] == ["--seed"]:
        t = time.monotonic()
        gone = empty_students_caches()
        copied, removed, size = sync_seed()
        touched = refresh_seed()
        print("seed %s from %s: %d files copied (%.0f MiB), %d removed, %d mtimes refreshed, %d old caches emptied, in %.1fs" % (
            SEED, IMAGE_SEED, copied, size / 2**20, removed, touched, gone, time.monotonic() - t))
        return
    if not os.path.isdir(SEED):
        sys.exit("user_go_cache.py: no seed at %s: run user_go_cache.py --seed first" % SEED)
    name = sys.argv[1]
    pw = pwd.getpwnam(name)
    touched = refresh_seed()

    dst = os.path.join(ROOT, name)
    made = not os.path.isdir(dst)
    os.makedirs(dst, mode=0o700, exist_ok=True)
    linked = 0
    for d, _, files in os.walk(SEED):
        out = os.path.join(dst, os.path.relpath(d, SEED))
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
