# The one notebook runner of attnbook: `go run ./kernel run` drives it, and so does the classroom
# image (build-time warm-up and docker/smoke-test.sh) with the kernel spec installed there.
#
#   python3 run.py '{"notebook": ..., "output": ..., "kernel": ..., "timeout": S, "startup_timeout": S, "cwd": ...}'
#   python3 run.py [--kernel attnbook] [--timeout S] [--out DIR] NOTEBOOK...
#
# Progress goes to stdout as JSON lines: {"event": "kernel"|"cell"|"fatal"|"notebook"|"done", ...};
# a "cell" event carries "epoch" (Unix seconds when the cell finished).
# A cell fails when the kernel replies with an error, or when the cell's program exits non-zero:
# GoNB then only prints "exit status N" to stderr, so that last stderr line is the signal.
# Cells tagged "raises-exception" may fail. Execution stops at the first failing cell. A cell that
# runs past the timeout is interrupted (the kernel stops its program) and fails. SIGINT or SIGTERM
# interrupts the running cell and stops. The executed copy (outputs so far) is written in every
# case. Exit: 0 ok, 1 a cell failed, 2 other (kernel did not start, interrupted, bad arguments).
import argparse
import json
import math
import os
import re
import signal
import sys
import time

import nbformat
from jupyter_core.utils import ensure_async, run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

EXIT_LINE = re.compile(r"(?:^|\n)(exit status \d+|signal: [^\n]+)\n*$")


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived."""


def on_signal(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def emit(**kv):
    print(json.dumps(kv), flush=True)


def coalesce(outputs):
    """Merges consecutive stream outputs of the same stream, as Jupyter's UI shows them."""
    merged = []
    for o in outputs:
        if (o.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == o.get("name")):
            merged[-1]["text"] += o.get("text", "")
        else:
            merged.append(o)
    return merged


def failure(cell):
    """Returns (ename, evalue, traceback) for a failed cell, or None.

    A program that exits non-zero: GoNB prints "exit status N" last on stderr (v0.11.5 also adds
    an error output whose value is just that line); the summary is then "exit status N" and the
    first stderr line before it (e.g. "panic: boom"), the traceback the stderr lines."""
    stderr = "".join(o.get("text", "") for o in cell.get("outputs", [])
                     if o.get("output_type") == "stream" and o.get("name") == "stderr")
    m = EXIT_LINE.search(stderr)
    exited = None
    if m:
        lines = [l for l in stderr[:m.start()].splitlines() if l.strip()]
        exited = m.group(1), lines[0] if lines else m.group(1), lines
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            if exited and EXIT_LINE.fullmatch(o.get("evalue", "").strip() + "\n"):
                return exited
            return o.get("ename", ""), o.get("evalue", ""), o.get("traceback", [])
    return exited


def interrupt(client):
    """Asks the kernel to stop the running cell (GoNB kills the cell's program)."""
    try:
        if client.km is not None:
            run_sync(lambda: ensure_async(client.km.interrupt_kernel()))()
    except Exception:
        pass


def run(cfg):
    """Executes one notebook; returns 0 (ok), 1 (a cell failed) or 2 (no kernel, interrupted)."""
    nb = nbformat.read(cfg["notebook"], as_version=4)
    # nbclient's timeouts are whole seconds (an int trait): round fractional ones up.
    timeout = int(math.ceil(cfg["timeout"]))
    # On a timeout nbclient interrupts the kernel and ends the cell with this error reply.
    on_timeout = {"ename": "Timeout", "evalue": "no result after %gs" % timeout, "traceback": []}
    client = NotebookClient(nb, kernel_name=cfg["kernel"], timeout=timeout, interrupt_on_timeout=True,
                            error_on_timeout=on_timeout,
                            startup_timeout=int(math.ceil(cfg["startup_timeout"])), allow_errors=True,
                            resources={"metadata": {"path": cfg["cwd"]}})
    status = 0
    t0 = time.monotonic()
    try:
        try:
            with client.setup_kernel():
                emit(event="kernel", seconds=time.monotonic() - t0)
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    fail = None
                    start = time.monotonic()
                    try:
                        client.execute_cell(cell, index)
                    except CellTimeoutError:
                        fail = ("Timeout", "no result after %gs (raise it with -timeout)" % timeout, [])
                    except DeadKernelError as e:
                        fail = ("DeadKernel", "the kernel died: %s" % e, [])
                    except Interrupted as e:
                        interrupt(client)
                        cell.outputs = coalesce(cell.get("outputs", []))
                        emit(event="cell", index=index, seconds=time.monotonic() - start, epoch=time.time(),
                             ok=False, ename="Interrupted", evalue="stopped by %s" % e, traceback=[])
                        raise
                    seconds = time.monotonic() - start
                    cell.outputs = coalesce(cell.get("outputs", []))
                    if fail is None and seconds >= timeout:
                        # interrupt_on_timeout: the kernel stopped the cell and replied.
                        fail = ("Timeout", "no result after %gs: interrupted (raise it with -timeout)" % timeout, [])
                    if fail is None and "raises-exception" not in cell.metadata.get("tags", []):
                        fail = failure(cell)
                    ev = dict(event="cell", index=index, seconds=seconds, epoch=time.time(), ok=fail is None)
                    if fail:
                        ev.update(ename=fail[0], evalue=fail[1], traceback=fail[2])
                    emit(**ev)
                    if fail:
                        status = 1
                        break
        except Interrupted:
            emit(event="fatal", message="interrupted")
            status = 2
        except Exception as e:  # the kernel did not start, or died between cells
            emit(event="fatal", message="%s: %s" % (type(e).__name__, e))
            status = 2
    except Interrupted:  # a second signal while the kernel shut down
        emit(event="fatal", message="interrupted")
        status = 2
    finally:
        nbformat.write(nb, cfg["output"])
    return status


def main(argv):
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    if len(argv) == 1 and argv[0].startswith("{"):
        return run(json.loads(argv[0]))
    ap = argparse.ArgumentParser(prog="run.py", description="Execute notebooks with an installed Jupyter kernel.")
    ap.add_argument("--kernel", default="attnbook")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per cell")
    ap.add_argument("--startup-timeout", type=float, default=120)
    ap.add_argument("--out", default="", help="folder for executed copies (default: a temporary one)")
    ap.add_argument("notebooks", nargs="+")
    args = ap.parse_args(argv)
    out = args.out
    if not out:
        import tempfile
        out = tempfile.mkdtemp(prefix="attnbook-run-")
    os.makedirs(out, exist_ok=True)
    ok = 0
    for path in args.notebooks:
        path = os.path.abspath(path)
        emit(event="notebook", notebook=path)
        status = run({"notebook": path, "output": os.path.join(out, os.path.basename(path)),
                      "kernel": args.kernel, "timeout": args.timeout,
                      "startup_timeout": args.startup_timeout, "cwd": os.path.dirname(path)})
        emit(event="notebook", notebook=path, ok=status == 0, status=status)
        ok += status == 0
        if status == 2:
            break
    emit(event="done", ok=ok, total=len(args.notebooks), out=out)
    return 0 if ok == len(args.notebooks) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Interrupted:
        emit(event="fatal", message="interrupted")
        sys.exit(2)
    except Exception as e:
        emit(event="fatal", message="%s: %s" % (type(e).__name__, e))
        sys.exit(2)
