# Executes one notebook with nbclient for `go run ./kernel run` (attnbook).
#
# argv[1] is a JSON object: notebook, output, kernel, timeout, startup_timeout, cwd.
# Progress goes to stdout as JSON lines: {"event": "kernel"|"cell"|"fatal", ...}.
# A cell fails when the kernel replies with an error, or when the cell's program exits non-zero:
# GoNB then only prints "exit status N" to stderr, so that last stderr line is the signal.
# Cells tagged "raises-exception" may fail. Execution stops at the first failing cell; the
# executed copy (outputs so far) is written either way. Exit: 0 ok, 1 a cell failed, 2 other.
import json
import re
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

EXIT_LINE = re.compile(r"(?:^|\n)(exit status \d+|signal: [^\n]+)\n*$")


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
    """Returns (ename, evalue, traceback) for a failed cell, or None."""
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            return o.get("ename", ""), o.get("evalue", ""), o.get("traceback", [])
    stderr = "".join(o.get("text", "") for o in cell.get("outputs", [])
                     if o.get("output_type") == "stream" and o.get("name") == "stderr")
    m = EXIT_LINE.search(stderr)
    if m:
        lines = [l for l in stderr[:m.start()].splitlines() if l.strip()]
        return m.group(1), lines[0] if lines else m.group(1), lines
    return None


def main():
    cfg = json.loads(sys.argv[1])
    nb = nbformat.read(cfg["notebook"], as_version=4)
    client = NotebookClient(nb, kernel_name=cfg["kernel"], timeout=cfg["timeout"],
                            startup_timeout=cfg["startup_timeout"], allow_errors=True,
                            resources={"metadata": {"path": cfg["cwd"]}})
    status = 0
    t0 = time.monotonic()
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
                    fail = ("Timeout", "no result after %gs (raise it with -timeout)" % cfg["timeout"], [])
                except DeadKernelError as e:
                    fail = ("DeadKernel", "the kernel died: %s" % e, [])
                seconds = time.monotonic() - start
                cell.outputs = coalesce(cell.get("outputs", []))
                if fail is None and "raises-exception" not in cell.metadata.get("tags", []):
                    fail = failure(cell)
                ev = dict(event="cell", index=index, seconds=seconds, ok=fail is None)
                if fail:
                    ev.update(ename=fail[0], evalue=fail[1], traceback=fail[2])
                emit(**ev)
                if fail:
                    status = 1
                    break
    except Exception as e:  # the kernel did not start, or died between cells
        emit(event="fatal", message="%s: %s" % (type(e).__name__, e))
        status = 2
    nbformat.write(nb, cfg["output"])
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        emit(event="fatal", message="interrupted")
        sys.exit(2)
    except Exception as e:
        emit(event="fatal", message="%s: %s" % (type(e).__name__, e))
        sys.exit(2)
